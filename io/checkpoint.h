// Checkpoints: everything a training run needs to continue exactly where it stopped.
//
// A checkpoint holds the model's name, every named parameter and buffer (name, dtype, shape,
// values), the SGD options and momentum buffers (by parameter name), the epoch and step
// counters, named random-generator states and free-form metadata. The byte layout, version
// policy and checksum are documented in docs/checkpoint_format.md.
//
// Contract:
// - saveCheckpoint never leaves a broken file at `path`: it writes `path.tmp-<pid>`, fsyncs
//   it, renames it over `path` and fsyncs the directory. On failure it removes the temporary
//   file and throws; whatever was at `path` before is untouched.
// - loadCheckpoint checks the file's integrity (magic, version, length, CRC-32) and then that
//   it fits the model (name, and every parameter's and buffer's name, dtype and shape) before
//   it changes anything, so a refused checkpoint leaves the model and optimizer as they were.
// Every refusal is an imerge::Error that names the file and the mismatch.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "layers/module.h"
#include "optim/sgd.h"

namespace imerge::io {

// Where a run stands, beside the tensors. The app chooses what the counters mean; imerge-train
// stores completed epochs and global optimizer steps.
struct TrainingState {
  std::string modelName;  // the registry name the model was built from ("resnet20")
  int64_t epoch = 0;
  int64_t step = 0;
  // Generator::state() texts by role ("data", "dropout"), restored with setState().
  std::map<std::string, std::string> rngStates;
  // Anything else the app needs to repeat the run (data-loader seed, flags), as text.
  std::map<std::string, std::string> metadata;
};

// The format version this build writes; it reads every version up to this one.
inline constexpr uint32_t kCheckpointFormatVersion = 1;
// The largest checkpoint the reader accepts: it holds the whole file in memory, and 64 GiB is
// far above any model here (VGG-16 with momentum: 1.1 GB). A header declaring more is refused
// before anything is allocated.
inline constexpr uint64_t kMaxCheckpointBytes = uint64_t{64} << 30;

// Writes `model`'s parameters and buffers, `optimizer`'s options and momentum buffers (when
// not null) and `state` to `path`, atomically (see above). The optimizer must have been built
// from model.parameters(), so its i-th momentum buffer belongs to the i-th named parameter;
// that is checked by count and shape.
void saveCheckpoint(const std::string& path, const layers::Module& model, optim::Sgd* optimizer,
                    const TrainingState& state);

// Restores `model` (and `optimizer`, when not null) from `path` and returns the saved state.
// `modelName` is the name the caller built the model from; a checkpoint saved from another
// model is refused. With an optimizer, the checkpoint must hold SGD state saved with the same
// momentum, dampening, weight decay and Nesterov setting; its learning rate is restored and
// parameters without a saved momentum buffer get none (as before their first step).
TrainingState loadCheckpoint(const std::string& path, const std::string& modelName,
                             layers::Module& model, optim::Sgd* optimizer);

// One tensor as stored: for inspecting a checkpoint without a model (tools, tests).
struct CheckpointTensorInfo {
  std::string name;
  DType dtype = DType::Float32;
  Shape shape;
};

// What a checkpoint holds, read and integrity-checked but not applied to any model.
struct CheckpointSummary {
  uint32_t formatVersion = 0;
  TrainingState state;
  std::vector<CheckpointTensorInfo> parameters;
  std::vector<CheckpointTensorInfo> buffers;
  bool hasOptimizer = false;
  optim::SgdOptions sgdOptions;                 // when hasOptimizer
  std::vector<std::string> momentumParameters;  // parameters with a momentum buffer
};

CheckpointSummary inspectCheckpoint(const std::string& path);

}  // namespace imerge::io
