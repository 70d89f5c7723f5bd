// The backward engine: iterative and dependency-counted.
//
// It first walks the graph from the root to count, for every variable, how many recorded uses
// will contribute to its gradient. It then runs grad functions latest-created first (a max-heap
// on creation order, the reverse of the forward pass). When a variable's count reaches zero its
// gradient is final: a leaf's hooks fire at that moment, so a parameter's hook runs right after
// its last contribution while the rest of backward is still to come.
#pragma once

#include "autograd/variable.h"

namespace imerge::autograd {

class Engine {
 public:
  static void backward(const Variable& root, const Tensor& gradOutput, bool retainGraph);

 private:
  using Impl = Variable::Impl;
  static void countContributions(Impl& root, uint64_t backwardId);
  static void onGradientFinal(Variable& variable);
};

}  // namespace imerge::autograd
