// The backward engine: gradients on small graphs computed by hand, accumulation, graph
// release, no-grad mode, and the gradient hooks the distributed Reducer depends on: each fires
// once per backward, after the parameter's last contribution, while the rest of backward is
// still to run; gradients land in flat-buffer views when asked to; an op's result that only the
// graph refers to gives its value back.
#include "autograd/engine.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/ops/elementwise.h"
#include "core/device.h"
#include "support/error_text.h"
#include "support/tensor_builders.h"

namespace imerge {
namespace {

using autograd::Variable;
using testing::errorMessage;
using testing::expectContains;
using testing::floats;

Variable parameter(std::vector<float> values, const std::string& name) {
  Variable variable(floats(std::move(values)), true);
  variable.setName(name);
  return variable;
}

// An identity op that logs when its backward runs, to order events inside one backward.
Variable loggedIdentity(const Variable& input, std::vector<std::string>& log, std::string event) {
  return Variable(input.tensor(), {input},
                  [&log, event](std::vector<Variable>& inputs, const Tensor& gradOutput) {
                    log.push_back(event);
                    inputs[0].addGrad(gradOutput);
                  });
}

// ---- gradients on small graphs ----------------------------------------------------------

TEST(Backward, SumOfProduct) {
  Variable x = parameter({1, 2, 3}, "x");
  Variable w = parameter({4, 5, 6}, "w");
  Variable loss = autograd::sum(autograd::mul(x, w));
  EXPECT_FLOAT_EQ(loss.tensor().item(), 32.0f);
  loss.backward();
  EXPECT_EQ(x.grad().toVector(), (std::vector<float>{4, 5, 6}));
  EXPECT_EQ(w.grad().toVector(), (std::vector<float>{1, 2, 3}));
}

TEST(Backward, ChainThroughReluAndMean) {
  // loss = mean(relu(a * b - c)); relu passes elements 0 and 2 only.
  Variable a = parameter({1, 2, 3, -1}, "a");
  Variable b = parameter({2, 1, 2, 3}, "b");
  Variable c = parameter({1, 5, 1, 0}, "c");
  Variable loss = autograd::mean(autograd::relu(autograd::sub(autograd::mul(a, b), c)));
  EXPECT_FLOAT_EQ(loss.tensor().item(), (1.0f + 0.0f + 5.0f + 0.0f) / 4.0f);
  loss.backward();
  EXPECT_EQ(a.grad().toVector(), (std::vector<float>{0.5f, 0, 0.5f, 0}));
  EXPECT_EQ(b.grad().toVector(), (std::vector<float>{0.25f, 0, 0.75f, 0}));
  EXPECT_EQ(c.grad().toVector(), (std::vector<float>{-0.25f, 0, -0.25f, 0}));
}

TEST(Backward, DiamondAddsBothPaths) {
  // h = x * x; loss = sum(h + 3h) = 4 sum(x^2): d/dx = 8x, through two paths from h.
  Variable x = parameter({1, -2}, "x");
  Variable h = autograd::mul(x, x);
  Variable loss = autograd::sum(autograd::add(h, autograd::scale(h, 3.0f)));
  loss.backward();
  EXPECT_EQ(x.grad().toVector(), (std::vector<float>{8, -16}));
}

TEST(Backward, LeafRootGetsTheSeed) {
  Variable w(floats({3}), true);
  int fired = 0;
  w.addGradHook([&](Variable&) { ++fired; });
  w.backward();
  EXPECT_EQ(w.grad().toVector(), (std::vector<float>{1}));
  EXPECT_EQ(fired, 1);
}

TEST(Backward, AccumulatesAcrossCallsUntilZeroGrad) {
  Variable w = parameter({1, 2}, "w");
  Variable x(floats({3, 4}));
  autograd::sum(autograd::mul(w, x)).backward();
  autograd::sum(autograd::mul(w, x)).backward();
  EXPECT_EQ(w.grad().toVector(), (std::vector<float>{6, 8}));
  w.zeroGrad();
  EXPECT_FALSE(w.hasGrad());
  expectContains(errorMessage([&] { w.grad(); }), "'w' float32[2] has no gradient");
  autograd::sum(autograd::mul(w, x)).backward();
  EXPECT_EQ(w.grad().toVector(), (std::vector<float>{3, 4}));
}

TEST(Backward, NoGradModeRecordsNoGraph) {
  Variable w = parameter({1, 2}, "w");
  Variable loss;
  {
    autograd::NoGradGuard noGrad;
    EXPECT_FALSE(autograd::GradMode::enabled());
    loss = autograd::sum(autograd::mul(w, w));
  }
  EXPECT_TRUE(autograd::GradMode::enabled());
  EXPECT_FALSE(loss.requiresGrad());
  EXPECT_TRUE(loss.isLeaf());
  expectContains(errorMessage([&] { loss.backward(); }), "does not require grad");
  EXPECT_FALSE(w.hasGrad());
}

TEST(Backward, NoGradGuardsNest) {
  {
    autograd::NoGradGuard outer;
    {
      autograd::NoGradGuard inner;
      EXPECT_FALSE(autograd::GradMode::enabled());
    }
    EXPECT_FALSE(autograd::GradMode::enabled());
  }
  EXPECT_TRUE(autograd::GradMode::enabled());
}

TEST(Backward, SecondBackwardWithoutRetainGraphIsAClearError) {
  Variable w = parameter({1, 2}, "w");
  Variable loss = autograd::sum(autograd::mul(w, w));
  loss.backward();
  const std::string message = errorMessage([&] { loss.backward(); });
  expectContains(message, "second time");
  expectContains(message, "retainGraph");
  EXPECT_EQ(w.grad().toVector(), (std::vector<float>{2, 4}));  // untouched by the failed call
}

TEST(Backward, RetainGraphAllowsASecondBackward) {
  Variable w = parameter({1, 2}, "w");
  Variable loss = autograd::sum(autograd::mul(w, w));
  loss.backward(/*retainGraph=*/true);
  loss.backward(/*retainGraph=*/true);
  EXPECT_EQ(w.grad().toVector(), (std::vector<float>{4, 8}));
  loss.backward();  // the last one may free the graph
  EXPECT_EQ(w.grad().toVector(), (std::vector<float>{6, 12}));
  expectContains(errorMessage([&] { loss.backward(); }), "second time");
}

TEST(Backward, NonScalarNeedsAnExplicitGradient) {
  Variable w = parameter({1, 2}, "w");
  Variable y = autograd::scale(w, 3.0f);
  y.setName("y");
  const std::string message = errorMessage([&] { y.backward(); });
  expectContains(message, "'y' float32[2] is not a scalar");
  y.backward(floats({1, 10}));
  EXPECT_EQ(w.grad().toVector(), (std::vector<float>{3, 30}));
}

TEST(Backward, WrongShapedSeedGradientIsRejected) {
  Variable w = parameter({1, 2}, "w");
  Variable y = autograd::scale(w, 3.0f);
  expectContains(errorMessage([&] { y.backward(floats({1, 2, 3})); }), "float32[3]");
}

TEST(Backward, DetachCutsTheGraph) {
  Variable w = parameter({2}, "w");
  Variable cut = autograd::mul(w, w).detach();
  EXPECT_FALSE(cut.requiresGrad());
  EXPECT_EQ(cut.tensor().toVector(), (std::vector<float>{4}));
}

TEST(Backward, LeavesOnlyChangeRequiresGrad) {
  Variable w = parameter({2}, "w");
  Variable y = autograd::mul(w, w);
  expectContains(errorMessage([&] { y.setRequiresGrad(false); }), "only leaves");
  w.setRequiresGrad(false);
  EXPECT_FALSE(autograd::mul(w, w).requiresGrad());
}

// ---- values the forward no longer holds -----------------------------------------------------

size_t bytesInUse() {
  return cpuDevice().memoryStats().allocatedBytes;
}

TEST(ValueDropping, AnIntermediateHeldOnlyByTheGraphIsFreedAndBackwardStillWorks) {
  // x -> a = 2 x -> b = 3 a: scale saves nothing, so once the forward lets go of a, nothing
  // needs its 4 MiB; the graph still carries a's gradient through.
  constexpr int64_t kElements = 1 << 20;
  Variable x(Tensor::full({kElements}, 1.0f), true);
  const size_t start = bytesInUse();
  Variable b;
  {
    Variable a = autograd::scale(x, 2.0f);
    b = autograd::scale(a, 3.0f);
    EXPECT_GE(bytesInUse() - start, 2 * kElements * sizeof(float)) << "a and b are both held";
  }
  EXPECT_LT(bytesInUse() - start, 2 * kElements * sizeof(float)) << "a's value was not dropped";
  b.backward(Tensor::full({kElements}, 1.0f));
  EXPECT_EQ(x.grad().data<float>()[0], 6.0f);
  EXPECT_EQ(x.grad().data<float>()[kElements - 1], 6.0f);
}

TEST(ValueDropping, ValuesHeldOutsideTheGraphAndLeavesAreKept) {
  Variable x = parameter({1, -2, 3}, "x");
  Variable a = autograd::relu(x);
  Variable copy = a;  // another copy outside the graph
  a = Variable();
  Variable b = autograd::scale(copy, 2.0f);
  b.backward(floats({1, 1, 1}));
  EXPECT_EQ(copy.tensor().toVector(), (std::vector<float>{1, 0, 3}));
  EXPECT_EQ(x.tensor().toVector(), (std::vector<float>{1, -2, 3}));
  EXPECT_EQ(x.grad().toVector(), (std::vector<float>{2, 0, 2}));
}

TEST(ValueDropping, ReadingADroppedValueInsideTheGraphIsAClearError) {
  // An op that (wrongly) reads its input's value through the graph instead of capturing it.
  Variable x = parameter({1, 2}, "x");
  Variable out;
  {
    Variable hidden = autograd::scale(x, 2.0f);
    hidden.setName("hidden");
    out = Variable(floats({0, 0}), {hidden},
                   [](std::vector<Variable>& inputs, const Tensor&) { (void)inputs[0].tensor(); });
  }
  const std::string message = errorMessage([&] { out.backward(floats({1, 1})); });
  for (const char* part : {"'hidden'", "float32[2]", "was dropped", "capture"}) {
    expectContains(message, part);
  }
}

// ---- hooks ------------------------------------------------------------------------------

TEST(GradHooks, FireOnceWithTheFinalGradientForAWeightUsedTwice) {
  // y = w * x1 + w * x2 through two branches: dy/dw = x1 + x2, complete only after both.
  Variable w = parameter({1, 2, 3}, "w");
  Variable x1(floats({10, 20, 30}));
  Variable x2(floats({1, 2, 3}));
  int fired = 0;
  w.addGradHook([&](Variable& param) {
    ++fired;
    EXPECT_EQ(param.id(), w.id());
    ASSERT_TRUE(param.hasGrad());
    EXPECT_EQ(param.grad().toVector(), (std::vector<float>{11, 22, 33}));
  });
  autograd::sum(autograd::add(autograd::mul(w, x1), autograd::mul(w, x2))).backward();
  EXPECT_EQ(fired, 1);
}

TEST(GradHooks, FireOnceWithTheFinalGradientForAWeightSharedByTwoLayers) {
  // h = w * x; z = w * relu(h); loss = sum(z). With w = [2, -1], x = [3, -4]: h = [6, 4], so
  // dloss/dw = relu(h) + w * x = [6 + 6, 4 + 4] = [12, 8] and dloss/dx = w * w = [4, 1].
  Variable w = parameter({2, -1}, "w");
  Variable x = parameter({3, -4}, "x");
  int wFired = 0;
  int xFired = 0;
  w.addGradHook([&](Variable& param) {
    ++wFired;
    EXPECT_EQ(param.grad().toVector(), (std::vector<float>{12, 8}));
  });
  x.addGradHook([&](Variable& param) {
    ++xFired;
    EXPECT_EQ(param.grad().toVector(), (std::vector<float>{4, 1}));
  });
  Variable h = autograd::mul(w, x);
  autograd::sum(autograd::mul(w, autograd::relu(h))).backward();
  EXPECT_EQ(wFired, 1);
  EXPECT_EQ(xFired, 1);
}

TEST(GradHooks, FireOncePerBackwardAndSeeTheAccumulatedGradient) {
  Variable w = parameter({1, 2}, "w");
  Variable x(floats({3, 4}));
  std::vector<std::vector<float>> seen;
  w.addGradHook([&](Variable& param) { seen.push_back(param.grad().toVector()); });
  autograd::sum(autograd::mul(w, x)).backward();
  autograd::sum(autograd::mul(w, x)).backward();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], (std::vector<float>{3, 4}));
  EXPECT_EQ(seen[1], (std::vector<float>{6, 8}));
}

TEST(GradHooks, FireForAVariableUsedTwiceByOneOp) {
  Variable w = parameter({3}, "w");
  int fired = 0;
  w.addGradHook([&](Variable& param) {
    ++fired;
    EXPECT_EQ(param.grad().toVector(), (std::vector<float>{6}));
  });
  autograd::sum(autograd::mul(w, w)).backward();
  EXPECT_EQ(fired, 1);
}

TEST(GradHooks, ALateLayersHookFiresBeforeEarlierGradientsAreComputed) {
  // x -> op1(w1) -> op2(w2) -> loss. The backward reaches w2 first; its hook (which would
  // launch an all-reduce) must run before op1's backward computes w1's gradient.
  Variable x(floats({1, 2}));
  Variable w1 = parameter({3, 4}, "w1");
  Variable w2 = parameter({5, 6}, "w2");
  std::vector<std::string> log;
  w1.addGradHook([&](Variable&) { log.push_back("w1 hook"); });
  w2.addGradHook([&](Variable&) {
    log.push_back("w2 hook");
    EXPECT_FALSE(w1.hasGrad()) << "w1's gradient was computed before w2's hook fired";
  });
  Variable h1 = loggedIdentity(autograd::mul(x, w1), log, "op1 backward");
  Variable h2 = loggedIdentity(autograd::mul(h1, w2), log, "op2 backward");
  autograd::sum(h2).backward();
  EXPECT_EQ(log, (std::vector<std::string>{"op2 backward", "w2 hook", "op1 backward", "w1 hook"}));
  EXPECT_EQ(w1.grad().toVector(), (std::vector<float>{5, 12}));
  EXPECT_EQ(w2.grad().toVector(), (std::vector<float>{3, 8}));
}

TEST(GradHooks, HooksAreAListAndRemoveGradHookRemovesOne) {
  Variable w = parameter({1}, "w");
  std::vector<std::string> log;
  w.addGradHook([&](Variable&) { log.push_back("first"); });
  autograd::HookHandle second = w.addGradHook([&](Variable&) { log.push_back("second"); });
  w.addGradHook([&](Variable&) { log.push_back("third"); });
  autograd::sum(autograd::scale(w, 2.0f)).backward();
  EXPECT_EQ(log, (std::vector<std::string>{"first", "second", "third"}));
  log.clear();
  w.removeGradHook(second);
  autograd::sum(autograd::scale(w, 2.0f)).backward();
  EXPECT_EQ(log, (std::vector<std::string>{"first", "third"}));
}

TEST(GradHooks, DoNotFireForParametersOutsideTheGraph) {
  Variable used = parameter({1}, "used");
  Variable unused = parameter({1}, "unused");
  int fired = 0;
  unused.addGradHook([&](Variable&) { ++fired; });
  autograd::sum(autograd::scale(used, 2.0f)).backward();
  EXPECT_EQ(fired, 0);
  EXPECT_FALSE(unused.hasGrad());
}

// ---- gradient buffers ---------------------------------------------------------------------

TEST(GradBuffer, GradientsLandInViewsOfOneFlatBuffer) {
  Variable w1 = parameter({1, 2}, "w1");
  Variable w2 = parameter({3, 4, 5}, "w2");
  Tensor flat = Tensor::full({5}, -99.0f);  // stale contents must be overwritten, not added to
  w1.setGradBuffer(flat.flatView(0, {2}));
  w2.setGradBuffer(flat.flatView(2, {3}));
  Variable loss =
      autograd::add(autograd::sum(autograd::scale(w1, 2.0f)), autograd::sum(autograd::mul(w2, w2)));
  loss.backward();
  EXPECT_TRUE(w1.grad().sharesStorageWith(flat));
  EXPECT_TRUE(w2.grad().sharesStorageWith(flat));
  EXPECT_EQ(flat.toVector(), (std::vector<float>{2, 2, 6, 8, 10}));

  // Accumulation stays in the buffer; after zeroGrad the next backward starts afresh.
  autograd::sum(autograd::scale(w1, 2.0f)).backward();
  EXPECT_EQ(flat.toVector(), (std::vector<float>{4, 4, 6, 8, 10}));
  w1.zeroGrad();
  autograd::sum(autograd::scale(w1, 3.0f)).backward();
  EXPECT_EQ(flat.toVector(), (std::vector<float>{3, 3, 6, 8, 10}));
  EXPECT_TRUE(w1.grad().sharesStorageWith(flat));
}

TEST(GradBuffer, AnExistingGradientMovesIntoTheBuffer) {
  Variable w = parameter({1, 2}, "w");
  autograd::sum(autograd::scale(w, 5.0f)).backward();
  Tensor flat = Tensor::zeros({4});
  w.setGradBuffer(flat.flatView(1, {2}));
  EXPECT_TRUE(w.grad().sharesStorageWith(flat));
  EXPECT_EQ(flat.toVector(), (std::vector<float>{0, 5, 5, 0}));
}

TEST(GradBuffer, HookSeesTheGradientInTheBuffer) {
  Variable w = parameter({1, 2}, "w");
  Tensor flat = Tensor::zeros({2});
  w.setGradBuffer(flat.flatView(0, {2}));
  bool fired = false;
  w.addGradHook([&](Variable& param) {
    fired = true;
    EXPECT_TRUE(param.grad().sharesStorageWith(flat));
    EXPECT_EQ(flat.toVector(), (std::vector<float>{2, 4}));
  });
  autograd::sum(autograd::mul(w, w)).backward();
  EXPECT_TRUE(fired);
}

TEST(GradBuffer, MismatchedBufferIsRejected) {
  Variable w = parameter({1, 2}, "w");
  const std::string message = errorMessage([&] { w.setGradBuffer(Tensor::zeros({3})); });
  expectContains(message, "float32[3]");
  expectContains(message, "'w' float32[2]");
}

TEST(GradBuffer, FirstContributionIntoALeafNeverAliasesAnOpsTensor) {
  // add passes its output gradient straight through; the leaf must get its own copy, or an
  // in-place average of the leaf's gradient would corrupt the caller's tensor (and vice versa).
  Variable w = parameter({1, 2}, "w");
  Variable x(floats({0, 0}));
  Tensor seed = floats({7, 8});
  autograd::add(w, x).backward(seed);
  EXPECT_FALSE(w.grad().sharesStorageWith(seed));
  EXPECT_EQ(w.grad().toVector(), (std::vector<float>{7, 8}));
  seed.fill(0.0f);
  EXPECT_EQ(w.grad().toVector(), (std::vector<float>{7, 8}));

  // Likewise for a tensor an op hands over directly.
  Variable v = parameter({1, 2}, "v");
  Tensor handedOver = floats({3, 4});
  Variable out(v.tensor(), {v}, [handedOver](std::vector<Variable>& inputs, const Tensor&) {
    inputs[0].addGrad(handedOver);
  });
  autograd::sum(out).backward();
  EXPECT_FALSE(v.grad().sharesStorageWith(handedOver));
  v.grad().fill(0.0f);
  EXPECT_EQ(handedOver.toVector(), (std::vector<float>{3, 4}));
}

TEST(GradBuffer, ALeafTakesATemporaryGradientThatNothingElseHoldsWithoutACopy) {
  // The largest weight's gradient (VGG-16's first classifier layer: 392 MiB) would otherwise
  // exist twice at the peak of backward.
  Variable v = parameter({1, 2}, "v");
  const float* produced = nullptr;
  Variable out(v.tensor(), {v}, [&produced](std::vector<Variable>& inputs, const Tensor&) {
    Tensor fresh = floats({3, 4});
    produced = fresh.data<float>();
    inputs[0].addGrad(std::move(fresh));
  });
  autograd::sum(out).backward();
  EXPECT_EQ(v.grad().data<float>(), produced);
  EXPECT_EQ(v.grad().toVector(), (std::vector<float>{3, 4}));
}

TEST(GradBuffer, SharedPassThroughGradientsAreCopiedBeforeAccumulating) {
  // z = a + b with a = b = h (a non-leaf): h gets the same tensor twice; adding in place to the
  // first would double-count into the second.
  Variable w = parameter({1, 2}, "w");
  Variable h = autograd::scale(w, 1.0f);
  Tensor seed = floats({1, 1});
  autograd::add(h, h).backward(seed);
  EXPECT_EQ(w.grad().toVector(), (std::vector<float>{2, 2}));
  EXPECT_EQ(seed.toVector(), (std::vector<float>{1, 1}));
}

}  // namespace
}  // namespace imerge
