// Module: the base of every layer and model (Flashlight's and PyTorch's nn.Module).
//
// A module owns named parameters (Variables that require grad), named buffers (tensors that
// are state but not trained, like batch-norm running statistics) and named children. Names
// are dotted paths ("features.0.weight"), so checkpoints and the distributed reducer can
// refer to every tensor by name. Parameters are listed in registration order, which is the
// forward order; backward produces their gradients roughly in reverse.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/variable.h"
#include "core/random.h"

namespace imerge::layers {

using autograd::Variable;

class Module {
 public:
  virtual ~Module() = default;

  virtual Variable forward(const Variable& input) = 0;
  Variable operator()(const Variable& input) { return forward(input); }

  // Every parameter of this module and its children, depth first in registration order.
  std::vector<Variable> parameters() const;
  std::vector<std::pair<std::string, Variable>> namedParameters() const;
  std::vector<std::pair<std::string, Tensor>> namedBuffers() const;
  const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& children() const {
    return children_;
  }

  void train(bool training = true);
  void eval() { train(false); }
  bool isTraining() const { return training_; }

  void zeroGrad();
  int64_t parameterCount() const;  // total elements over all parameters

  // Moves every parameter and floating-point buffer of this module and its children to
  // `device` (PyTorch's module.to(device)), in place: Variables held elsewhere (an optimizer's,
  // a Reducer's) see the moved tensors, since they share the parameter. Gradients are dropped.
  // Integer buffers (batch-norm's num_batches_tracked) stay on the host, where the layers count
  // in them. Call it before building the optimizer or DataParallel: their state (momentum,
  // flat gradient buffers) is made on the parameters' device when they are built.
  void to(Device& device);
  // The device of the first parameter (the CPU for a module without parameters).
  Device& device() const;

  // Short description for summaries: "Conv2d(3, 64, kernel=3, stride=1, padding=1)".
  virtual std::string describe() const = 0;

  // This module's own parameters, without its children's.
  const std::vector<std::pair<std::string, Variable>>& ownParameters() const { return parameters_; }
  // A function run at the start of forward() by every module that owns parameters (Conv2d,
  // Linear, BatchNorm2d), before it reads them. The data-parallel `priority` strategy waits
  // there for this layer's update only, so a forward pass overlaps the previous step's
  // communication. An empty function removes it.
  void setForwardPreHook(std::function<void(Module&)> hook) { forwardPreHook_ = std::move(hook); }

 protected:
  Variable registerParameter(const std::string& name, Tensor value);
  Tensor& registerBuffer(const std::string& name, Tensor value);
  void runForwardPreHook() {
    if (forwardPreHook_) forwardPreHook_(*this);
  }
  template <typename Child>
  std::shared_ptr<Child> registerModule(const std::string& name, std::shared_ptr<Child> child) {
    addChild(name, child);
    return child;
  }

 private:
  void addChild(const std::string& name, std::shared_ptr<Module> child);
  void collectParameters(const std::string& prefix,
                         std::vector<std::pair<std::string, Variable>>& out) const;
  void collectBuffers(const std::string& prefix,
                      std::vector<std::pair<std::string, Tensor>>& out) const;

  std::vector<std::pair<std::string, Variable>> parameters_;
  // Stable addresses: layers keep the references registerBuffer returns and update in place.
  std::vector<std::pair<std::string, std::unique_ptr<Tensor>>> buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
  std::function<void(Module&)> forwardPreHook_;
};

}  // namespace imerge::layers
