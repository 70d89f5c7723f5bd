#include "autograd/engine.h"

#include <atomic>
#include <queue>

namespace imerge::autograd {

namespace {
std::atomic<uint64_t> nextBackwardId{1};

}  // namespace

void Engine::countContributions(Impl& root, uint64_t backwardId) {
  std::vector<Impl*> stack{&root};
  root.visitedInBackward = backwardId;
  root.pendingContributions = 0;
  while (!stack.empty()) {
    Impl* node = stack.back();
    stack.pop_back();
    IMERGE_CHECK(!node->graphReleased,
                 "backward: trying to backward through the graph a second "
                 "time (through '",
                 node->name,
                 "'); its saved tensors were freed. Pass "
                 "retainGraph=true to the first backward if you need to go through it twice");
    for (Variable& input : node->inputs) {
      if (!input.defined() || !input.requiresGrad()) continue;
      Impl& inputImpl = *input.impl_;
      if (inputImpl.visitedInBackward != backwardId) {
        inputImpl.visitedInBackward = backwardId;
        inputImpl.pendingContributions = 0;
        stack.push_back(&inputImpl);
      }
      ++inputImpl.pendingContributions;
    }
  }
}

void Engine::onGradientFinal(Variable& variable) {
  // Copy the list: a hook may add or remove hooks.
  auto hooks = variable.impl_->hooks;
  for (auto& [id, hook] : hooks) hook(variable);
}

void Engine::backward(const Variable& root, const Tensor& gradOutput, bool retainGraph) {
  IMERGE_CHECK(root.defined() && root.requiresGrad(), "backward: '", root.name(),
               "' does not require grad: no parameter that requires grad was used to compute it "
               "(or it was computed under NoGradGuard)");
  const uint64_t backwardId = nextBackwardId.fetch_add(1);
  countContributions(*root.impl_, backwardId);

  Variable rootCopy = root;
  rootCopy.addGrad(gradOutput);
  if (rootCopy.isLeaf()) {
    onGradientFinal(rootCopy);
    return;
  }

  // Later-created ops run first: the reverse of the forward pass, as in PyTorch.
  auto laterFirst = [](const Variable& a, const Variable& b) {
    return a.impl_->sequence < b.impl_->sequence;
  };
  std::priority_queue<Variable, std::vector<Variable>, decltype(laterFirst)> ready(laterFirst);
  ready.push(rootCopy);

  while (!ready.empty()) {
    Variable node = ready.top();
    ready.pop();
    Impl& nodeImpl = *node.impl_;
    if (nodeImpl.grad.defined()) {
      onGradientFinal(node);
      nodeImpl.gradFunc(nodeImpl.inputs, nodeImpl.grad);
    }
    for (Variable& input : nodeImpl.inputs) {
      if (!input.defined() || !input.requiresGrad()) continue;
      Impl& inputImpl = *input.impl_;
      if (--inputImpl.pendingContributions != 0) continue;
      if (input.isLeaf()) {
        if (inputImpl.grad.defined()) onGradientFinal(input);
      } else {
        ready.push(input);
      }
    }
    // Intermediate gradients are spent once their grad function ran.
    nodeImpl.grad = Tensor();
    if (!retainGraph) {
      // Free the saved tensors now rather than when the graph's last owner lets go.
      nodeImpl.gradFunc = nullptr;
      nodeImpl.inputs.clear();
      nodeImpl.graphReleased = true;
    }
  }
}

}  // namespace imerge::autograd
