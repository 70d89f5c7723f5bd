// Variable: a tensor that may take part in reverse-mode differentiation (Flashlight style).
//
// A Variable is one shared pointer, so copies refer to the same value, gradient and graph node.
// An op computes its output tensor and records a GradFunc that, given the output's gradient,
// adds gradients to its inputs with addGrad(). backward() (autograd/engine.h) walks the graph.
//
// Memory: an op's result keeps its value only while code outside the graph holds a copy of the
// Variable. The graph's own references (each op's inputs) do not keep it: when the forward has
// moved on, the value is dropped, and only the tensors ops saved for their backward (captured in
// their GradFunc) stay, as in PyTorch. So a GradFunc reads its inputs' values only through what
// it captured, never through inputs[i].tensor().
//
// Gradient hooks fire exactly once per backward, when the variable's gradient is final: for a
// parameter, right after its last contribution. The distributed Reducer hangs on them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace imerge::autograd {

class Variable;
using GradFunc = std::function<void(std::vector<Variable>& inputs, const Tensor& gradOutput)>;
using GradHook = std::function<void(Variable& variable)>;

struct HookHandle {
  uint64_t id = 0;
};

class Variable {
 public:
  Variable() = default;  // undefined
  // A leaf: a parameter (requiresGrad) or an input (not).
  explicit Variable(Tensor value, bool requiresGrad = false);
  // An op's result. Records the graph only when grad mode is on and an input requires grad.
  Variable(Tensor value, std::vector<Variable> inputs, GradFunc gradFunc);

  bool defined() const { return impl_ != nullptr; }
  const Tensor& tensor() const;
  Tensor& tensor();
  const Shape& shape() const { return tensor().shape(); }
  int64_t dim(int index) const { return tensor().dim(index); }
  int64_t numel() const { return tensor().numel(); }

  bool requiresGrad() const;
  void setRequiresGrad(bool requiresGrad);  // leaves only
  bool isLeaf() const;

  const std::string& name() const;
  void setName(std::string name);

  // The accumulated gradient; undefined until a backward reaches this variable.
  bool hasGrad() const;
  const Tensor& grad() const;
  Tensor& grad();
  // Adds a contribution. Leaves accumulate across backward calls until zeroGrad(). Taken by
  // value: a gradient passed as a temporary that nothing else holds becomes the leaf's
  // gradient without a copy (PyTorch's AccumulateGrad steals it the same way), which saves
  // a second copy of the largest weight's gradient at the peak of backward.
  void addGrad(Tensor gradient);
  // Forgets the gradient (PyTorch's set_to_none); the next backward starts afresh.
  void zeroGrad();
  // Makes future gradients land in `buffer` (a view into a flat bucket), so a fused all-reduce
  // needs no copy. The buffer must have the variable's shape.
  void setGradBuffer(Tensor buffer);
  const Tensor& gradBuffer() const;

  HookHandle addGradHook(GradHook hook);
  void removeGradHook(HookHandle handle);

  // Reverse-mode differentiation from this variable; the seed gradient defaults to ones for a
  // one-element variable (a loss).
  void backward(bool retainGraph = false);
  void backward(const Tensor& gradOutput, bool retainGraph = false);

  // The same value cut off from the graph.
  Variable detach() const;

  // Identity, for maps keyed by variable.
  const void* id() const { return impl_.get(); }

 private:
  friend class Engine;
  struct Impl;
  struct ValueOwner;
  std::shared_ptr<Impl> impl_;
  // Shared by the copies of an op's result outside the graph; null in the graph's own copies and
  // for leaves (whose values are never dropped).
  std::shared_ptr<ValueOwner> valueOwner_;

  Impl& impl() const;
  Impl& implWithValue() const;  // impl(), refusing a dropped value
};

// What the engine and ops keep per variable. Public to autograd's own files only.
struct Variable::Impl {
  Tensor value;
  // Set when the value was dropped (see "Memory" above); the shape still checks gradients.
  bool valueDropped = false;
  Shape droppedShape;
  bool requiresGrad = false;
  std::string name;

  Tensor grad;
  Tensor gradBuffer;
  // An op's gradient for a non-leaf may be shared with other variables (add passes its
  // gradient through), so it is copied before anything is added to it in place.
  bool gradOwned = false;

  std::vector<Variable> inputs;  // empty for leaves
  GradFunc gradFunc;             // empty for leaves
  uint64_t sequence = 0;         // creation order; backward visits later ops first
  bool graphReleased = false;    // a backward without retainGraph freed inputs and gradFunc

  std::vector<std::pair<uint64_t, GradHook>> hooks;
  uint64_t nextHookId = 1;

  // Engine bookkeeping for the backward in progress.
  int pendingContributions = 0;
  uint64_t visitedInBackward = 0;
};

}  // namespace imerge::autograd
