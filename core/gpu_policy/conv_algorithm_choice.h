// The rules by which a CUDA convolution picks its algorithm from cuDNN's search results, and how
// big a workspace that search gets. Plain C++ without cuDNN types, so the rules are compiled in
// every build and tested on the CPU (tests/core/conv_algorithm_choice_test.cpp); convolution.cu
// translates cuDNN's cudnnConvolution*AlgoPerf_t into AlgorithmTrial.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace imerge::cuda {

// One algorithm as cuDNN's search (cudnnFindConvolution*AlgorithmEx) reports it.
struct AlgorithmTrial {
  int algorithm = 0;
  bool succeeded = false;      // status == CUDNN_STATUS_SUCCESS: it ran within the workspace
  float milliseconds = 0.0f;   // time
  size_t workspaceBytes = 0;   // memory
  bool deterministic = false;  // determinism == CUDNN_DETERMINISTIC
  bool fmaMath = false;        // mathType == CUDNN_FMA_MATH: plain float32, no TF32
};

struct AlgorithmRequirements {
  size_t workspaceLimitBytes = 0;  // the most workspace the chosen algorithm may use
  bool deterministic = false;      // only bit-reproducible algorithms
  bool fmaMathOnly = false;        // only plain float32 math (TF32 not allowed)
};

// The index of the fastest trial that succeeded and meets every requirement (the first of
// equally fast ones), or nullopt when none does.
std::optional<size_t> chooseAlgorithm(const std::vector<AlgorithmTrial>& trials,
                                      const AlgorithmRequirements& requirements);

// The trials in words, for the error when none qualifies: "algorithm 1: 0.25 ms, 4096 bytes,
// deterministic, FMA math; algorithm 5: failed".
std::string describeTrials(const std::vector<AlgorithmTrial>& trials);

// The search's first workspace: what the hungriest candidate algorithm asks for, capped by the
// limit; candidates that need more than the search gets are reported as failed by cuDNN.
size_t firstSearchWorkspaceBytes(size_t limitBytes, size_t largestAskBytes);

// The next try after the search's workspace could not be had (the allocation or cuDNN itself
// ran out of memory): half as much, and zero once that is below 1 MiB, since some algorithm
// always runs without a workspace. Returns 0 for 0: the caller stops retrying there.
size_t nextSearchWorkspaceBytes(size_t failedBytes);

}  // namespace imerge::cuda
