#include "autograd/variable.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "autograd/engine.h"
#include "autograd/grad_mode.h"
#include "core/backend.h"

namespace imerge::autograd {

namespace {
std::atomic<uint64_t> nextSequence{1};
}

// When the last copy of an op's result outside the graph goes, the graph alone refers to it, and
// the graph needs only its gradient bookkeeping: the value is dropped.
struct Variable::ValueOwner {
  std::weak_ptr<Impl> owned;
  ~ValueOwner() {
    if (std::shared_ptr<Impl> impl = owned.lock()) {
      impl->droppedShape = impl->value.shape();
      impl->value = Tensor();
      impl->valueDropped = true;
    }
  }
};

Variable::Variable(Tensor value, bool requiresGrad) : impl_(std::make_shared<Impl>()) {
  impl_->value = std::move(value);
  impl_->requiresGrad = requiresGrad;
  impl_->sequence = nextSequence.fetch_add(1, std::memory_order_relaxed);
}

Variable::Variable(Tensor value, std::vector<Variable> inputs, GradFunc gradFunc)
    : Variable(std::move(value), false) {
  if (!GradMode::enabled()) return;
  const bool anyInputNeedsGrad = std::any_of(inputs.begin(), inputs.end(), [](const Variable& v) {
    return v.defined() && v.requiresGrad();
  });
  if (!anyInputNeedsGrad) return;
  impl_->requiresGrad = true;
  impl_->inputs = std::move(inputs);
  // The graph's copies of the inputs keep no input's value alive.
  for (Variable& input : impl_->inputs) input.valueOwner_.reset();
  impl_->gradFunc = std::move(gradFunc);
  valueOwner_ = std::make_shared<ValueOwner>();
  valueOwner_->owned = impl_;
}

Variable::Impl& Variable::impl() const {
  IMERGE_CHECK(impl_ != nullptr, "Variable: using an undefined variable");
  return *impl_;
}

Variable::Impl& Variable::implWithValue() const {
  Impl& self = impl();
  IMERGE_CHECK(!self.valueDropped, "Variable: the value of '", self.name, "' float32",
               shapeToString(self.droppedShape),
               " was dropped when the forward no longer held it; an op whose backward reads an "
               "input's value must capture that tensor in its GradFunc");
  return self;
}

const Tensor& Variable::tensor() const {
  return implWithValue().value;
}
Tensor& Variable::tensor() {
  return implWithValue().value;
}

bool Variable::requiresGrad() const {
  return impl().requiresGrad;
}

void Variable::setRequiresGrad(bool requiresGrad) {
  IMERGE_CHECK(isLeaf(), "Variable::setRequiresGrad: '", name(),
               "' is the result of an op; only leaves can change requiresGrad");
  impl().requiresGrad = requiresGrad;
}

bool Variable::isLeaf() const {
  return !impl().gradFunc && !impl().graphReleased;
}

const std::string& Variable::name() const {
  return impl().name;
}
void Variable::setName(std::string name) {
  impl().name = std::move(name);
}

bool Variable::hasGrad() const {
  return impl().grad.defined();
}

const Tensor& Variable::grad() const {
  IMERGE_CHECK(hasGrad(), "Variable::grad: '", name(), "' ", tensor().describe(),
               " has no gradient (no backward has reached it since the last zeroGrad)");
  return impl().grad;
}

Tensor& Variable::grad() {
  IMERGE_CHECK(hasGrad(), "Variable::grad: '", name(), "' ", tensor().describe(),
               " has no gradient (no backward has reached it since the last zeroGrad)");
  return impl().grad;
}

void Variable::addGrad(Tensor gradient) {
  Impl& self = impl();
  const Shape& shape = self.valueDropped ? self.droppedShape : self.value.shape();
  IMERGE_CHECK(gradient.shape() == shape, "Variable::addGrad: gradient ", gradient.describe(),
               " does not match '", self.name, "' ", shapeToString(shape));
  if (!self.grad.defined()) {
    if (self.gradBuffer.defined()) {
      self.gradBuffer.copyFrom(gradient);
      self.grad = self.gradBuffer;
      self.gradOwned = true;
    } else if (isLeaf()) {
      // A leaf's gradient outlives this backward and is updated in place by its owner (the
      // reducer averages it, accumulation adds to it), so it must not alias a tensor that
      // anything else holds.
      self.grad = gradient.ownsStorageAlone() ? std::move(gradient) : gradient.clone();
      self.gradOwned = true;
    } else {
      self.grad = gradient;
      self.gradOwned = false;
    }
    return;
  }
  if (!self.gradOwned) {
    // Added to in place below: copied first unless nothing else holds it.
    if (!self.grad.ownsStorageAlone()) self.grad = self.grad.clone();
    self.gradOwned = true;
  }
  backendFor("gradient accumulation", self.grad, gradient).addInPlace(self.grad, gradient);
}

void Variable::zeroGrad() {
  impl().grad = Tensor();
  impl().gradOwned = false;
}

void Variable::setGradBuffer(Tensor buffer) {
  Impl& self = impl();
  IMERGE_CHECK(buffer.shape() == self.value.shape() && buffer.dtype() == self.value.dtype(),
               "Variable::setGradBuffer: buffer ", buffer.describe(), " does not match '",
               self.name, "' ", self.value.describe());
  IMERGE_CHECK(&buffer.device() == &self.value.device(), "Variable::setGradBuffer: buffer of '",
               self.name, "' is on ", buffer.device().name(), ", the variable on ",
               self.value.device().name());
  if (self.grad.defined()) buffer.copyFrom(self.grad);
  self.gradBuffer = std::move(buffer);
  if (self.grad.defined()) self.grad = self.gradBuffer;
}

const Tensor& Variable::gradBuffer() const {
  return impl().gradBuffer;
}

HookHandle Variable::addGradHook(GradHook hook) {
  Impl& self = impl();
  const uint64_t id = self.nextHookId++;
  self.hooks.emplace_back(id, std::move(hook));
  return HookHandle{id};
}

void Variable::removeGradHook(HookHandle handle) {
  auto& hooks = impl().hooks;
  std::erase_if(hooks, [&](const auto& entry) { return entry.first == handle.id; });
}

void Variable::backward(bool retainGraph) {
  IMERGE_CHECK(numel() == 1, "Variable::backward: '", name(), "' ", tensor().describe(),
               " is not a scalar; pass the gradient of the output explicitly");
  backward(Tensor::full(shape(), 1.0f, tensor().device()), retainGraph);
}

void Variable::backward(const Tensor& gradOutput, bool retainGraph) {
  Engine::backward(*this, gradOutput, retainGraph);
}

Variable Variable::detach() const {
  return Variable(tensor(), false);
}

}  // namespace imerge::autograd
