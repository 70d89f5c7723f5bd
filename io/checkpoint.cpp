#include "io/checkpoint.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "core/input_file.h"
#include "io/checkpoint_encoding.h"
#include "io/checkpoint_writer.h"

namespace imerge::io {

using namespace detail;  // the file format's constants and helpers
using autograd::Variable;
using layers::Module;
using optim::Sgd;
using optim::SgdOptions;
namespace {

// The i-th momentum buffer belongs to the i-th named parameter only if the optimizer was built
// from model.parameters(); check what can be checked.
void checkOptimizerMatchesModel(const std::vector<std::pair<std::string, Variable>>& parameters,
                                Sgd& optimizer) {
  const auto& buffers = optimizer.momentumBuffers();
  IMERGE_CHECK(buffers.size() == parameters.size(), "checkpoint: the optimizer holds ",
               buffers.size(), " parameters but the model has ", parameters.size(),
               "; build the Sgd from model.parameters()");
  for (size_t i = 0; i < buffers.size(); ++i) {
    IMERGE_CHECK(!buffers[i].defined() || buffers[i].shape() == parameters[i].second.shape(),
                 "checkpoint: momentum buffer ", i, " ", buffers[i].describe(),
                 " does not fit parameter ", parameters[i].first, " ",
                 parameters[i].second.tensor().describe(),
                 "; build the Sgd from model.parameters()");
  }
}

// ---- reading ------------------------------------------------------------------------------

// Where a tensor's values sit in the file buffer.
struct StoredTensor {
  std::string name;
  DType dtype = DType::Float32;
  Shape shape;
  size_t offset = 0;
  size_t bytes = 0;
};

struct StoredCheckpoint {
  uint32_t formatVersion = 0;
  TrainingState state;
  std::vector<StoredTensor> parameters;
  std::vector<StoredTensor> buffers;
  bool hasOptimizer = false;
  SgdOptions sgdOptions;
  std::vector<StoredTensor> momentumBuffers;
  std::vector<uint8_t> file;  // the whole file; tensors point into it
};

// Bounds-checked reads from the payload. The checksum catches damage; these checks keep a
// file that is consistent but wrong (a bug, a hand-made file) from reading out of bounds.
class PayloadReader {
 public:
  PayloadReader(const std::vector<uint8_t>& file, size_t offset, std::string path)
      : file_(file), offset_(offset), path_(std::move(path)) {}

  const uint8_t* take(size_t size, const char* what) {
    if (size > file_.size() - offset_) {
      IMERGE_FAIL("checkpoint ", path_, " is malformed: ", what, " at byte ", offset_, " needs ",
                  size, " bytes, but only ", file_.size() - offset_, " remain");
    }
    const uint8_t* data = file_.data() + offset_;
    offset_ += size;
    return data;
  }
  template <typename T>
  T scalar(const char* what) {
    T value;
    std::memcpy(&value, take(sizeof value, what), sizeof value);
    return value;
  }
  std::string string(const char* what) {
    const auto size = scalar<uint32_t>(what);
    const uint8_t* data = take(size, what);
    return std::string(reinterpret_cast<const char*>(data), size);
  }
  std::map<std::string, std::string> stringMap(const char* what) {
    std::map<std::string, std::string> entries;
    const auto count = scalar<uint32_t>(what);
    for (uint32_t i = 0; i < count; ++i) {
      std::string key = string(what);
      entries[key] = string(what);
    }
    return entries;
  }
  StoredTensor tensor() {
    StoredTensor stored;
    stored.name = string("tensor name");
    const auto code = scalar<uint8_t>("tensor dtype");
    switch (code) {
      case 0:
        stored.dtype = DType::Float32;
        break;
      case 1:
        stored.dtype = DType::Int32;
        break;
      case 2:
        stored.dtype = DType::Int64;
        break;
      default:
        malformed("tensor " + stored.name + " has unknown dtype code " + std::to_string(code));
    }
    const auto ndim = scalar<uint32_t>("tensor rank");
    if (ndim > kMaxDims) {
      malformed("tensor " + stored.name + " has " + std::to_string(ndim) + " dimensions");
    }
    uint64_t numel = 1;
    for (uint32_t d = 0; d < ndim; ++d) {
      const auto size = scalar<int64_t>("tensor shape");
      if (size < 0) malformed("tensor " + stored.name + " has a negative size");
      stored.shape.push_back(size);
      // Sizes beyond the file cannot be real; stop before the product overflows.
      if (size > 0 && numel > file_.size() / static_cast<uint64_t>(size)) {
        malformed("tensor " + stored.name + " is larger than the file");
      }
      numel *= static_cast<uint64_t>(size);
    }
    stored.bytes = static_cast<size_t>(scalar<uint64_t>("tensor byte count"));
    if (stored.bytes != numel * dtypeSize(stored.dtype)) {
      malformed("tensor " + stored.name + " " + describeTensor(stored.dtype, stored.shape) +
                " claims " + std::to_string(stored.bytes) + " bytes");
    }
    stored.offset = offset_;
    take(stored.bytes, "tensor values");
    return stored;
  }
  std::vector<StoredTensor> tensors(const char* what) {
    std::vector<StoredTensor> list;
    const auto count = scalar<uint32_t>(what);
    for (uint32_t i = 0; i < count; ++i) list.push_back(tensor());
    return list;
  }
  [[noreturn]] void malformed(const std::string& what) const {
    IMERGE_FAIL("checkpoint ", path_, " is malformed: ", what);
  }
  size_t offset() const { return offset_; }

 private:
  const std::vector<uint8_t>& file_;
  size_t offset_;
  std::string path_;
};

// Closes a file descriptor on every way out.
struct FileDescriptor {
  int fd;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

// Reads exactly `count` bytes at the file's current position into `destination`; false at an
// early end of file.
bool readExactly(int fd, const std::string& path, uint8_t* destination, size_t count) {
  size_t done = 0;
  while (done < count) {
    const ssize_t got = ::read(fd, destination + done, std::min<size_t>(count - done, 1 << 24));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) IMERGE_FAIL("cannot read checkpoint ", path, ": ", errnoText(errno));
    if (got == 0) return false;
    done += static_cast<size_t>(got);
  }
  return true;
}

// Reads `path` and checks its integrity: header, version, length, checksum, then the payload's
// structure. Nothing here knows about a model. The header is read and checked before anything
// else is allocated: a path that is not a regular file, a file without the magic, and a
// declared length other than the file's size are refused having read at most 24 bytes, so a
// multi-gigabyte file given by mistake (or /dev/zero) costs no memory and no time.
StoredCheckpoint readCheckpoint(const std::string& path) {
  FileDescriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) IMERGE_FAIL("cannot read checkpoint ", path, ": ", errnoText(errno));
  // Not a regular file (a directory, /dev/zero), or larger than any checkpoint: refused before
  // a byte is read.
  const uint64_t fileBytes = checkedInputFileSize(path, kMaxCheckpointBytes, "checkpoint");

  uint8_t header[kHeaderBytes];
  if (fileBytes < kHeaderBytes || !readExactly(file.fd, path, header, kHeaderBytes)) {
    IMERGE_FAIL("checkpoint ", path, " is truncated: the file has ", fileBytes,
                " bytes, less than the ", kHeaderBytes, "-byte header");
  }
  if (std::memcmp(header, kMagic, sizeof kMagic) != 0) {
    IMERGE_FAIL("checkpoint ", path,
                " is not an imerge checkpoint: it does not start with the magic bytes IMERGECK");
  }
  uint32_t version = 0;
  uint32_t storedCrc = 0;
  uint64_t length = 0;
  std::memcpy(&version, header + 8, 4);
  std::memcpy(&storedCrc, header + 12, 4);
  std::memcpy(&length, header + 16, 8);
  if (version > kCheckpointFormatVersion) {
    IMERGE_FAIL("checkpoint ", path, " has format version ", version,
                ", newer than this build of imerge reads (up to version ", kCheckpointFormatVersion,
                "); use a newer imerge");
  }
  if (version == 0) IMERGE_FAIL("checkpoint ", path, " has invalid format version 0");
  if (length != fileBytes) {
    if (length > fileBytes) {
      IMERGE_FAIL("checkpoint ", path, " is truncated: header says ", length, " bytes, file has ",
                  fileBytes);
    }
    IMERGE_FAIL("checkpoint ", path, " has trailing bytes: header says ", length,
                " bytes, file has ", fileBytes);
  }

  // Only now the payload: exactly the length the header declares, which is the file's size
  // (and so within kMaxCheckpointBytes).
  StoredCheckpoint checkpoint;
  checkpoint.file.resize(static_cast<size_t>(length));
  std::memcpy(checkpoint.file.data(), header, kHeaderBytes);
  if (!readExactly(file.fd, path, checkpoint.file.data() + kHeaderBytes, length - kHeaderBytes)) {
    IMERGE_FAIL("checkpoint ", path, " is truncated: it became shorter than its header's ", length,
                " bytes while being read");
  }
  const std::vector<uint8_t>& bytes = checkpoint.file;
  const uint32_t computedCrc =
      crc32Update(0, bytes.data() + kHeaderBytes, bytes.size() - kHeaderBytes);
  if (computedCrc != storedCrc) {
    std::ostringstream message;
    message << "checkpoint " << path << ": checksum mismatch: the file is damaged (CRC-32 "
            << std::hex << "stored 0x" << storedCrc << ", computed 0x" << computedCrc << ")";
    IMERGE_FAIL(message.str());
  }

  checkpoint.formatVersion = version;
  PayloadReader reader(bytes, kHeaderBytes, path);
  TrainingState& state = checkpoint.state;
  state.modelName = reader.string("model name");
  state.epoch = reader.scalar<int64_t>("epoch");
  state.step = reader.scalar<int64_t>("step");
  state.rngStates = reader.stringMap("random states");
  state.metadata = reader.stringMap("metadata");
  checkpoint.parameters = reader.tensors("parameters");
  checkpoint.buffers = reader.tensors("buffers");
  const auto optimizer = reader.scalar<uint8_t>("optimizer kind");
  if (optimizer == kSgdOptimizer) {
    checkpoint.hasOptimizer = true;
    SgdOptions& options = checkpoint.sgdOptions;
    options.learningRate = reader.scalar<float>("SGD learning rate");
    options.momentum = reader.scalar<float>("SGD momentum");
    options.dampening = reader.scalar<float>("SGD dampening");
    options.weightDecay = reader.scalar<float>("SGD weight decay");
    options.nesterov = reader.scalar<uint8_t>("SGD Nesterov flag") != 0;
    checkpoint.momentumBuffers = reader.tensors("momentum buffers");
  } else if (optimizer != kNoOptimizer) {
    reader.malformed("unknown optimizer kind " + std::to_string(optimizer));
  }
  if (reader.offset() != bytes.size()) {
    reader.malformed(std::to_string(bytes.size() - reader.offset()) +
                     " bytes follow the last section");
  }
  return checkpoint;
}

// Collects every way the stored tensors of one kind ("parameter", "buffer") differ from the
// model's, so one refusal lists them all.
void compareTensors(const char* kind, const std::vector<StoredTensor>& stored,
                    const std::vector<std::pair<std::string, Tensor>>& model,
                    std::vector<std::string>& mismatches) {
  std::unordered_map<std::string, const StoredTensor*> byName;
  for (const StoredTensor& tensor : stored) {
    if (!byName.emplace(tensor.name, &tensor).second) {
      mismatches.push_back(std::string(kind) + " " + tensor.name + " is stored twice");
    }
  }
  std::unordered_map<std::string, bool> inModel;
  for (const auto& [name, tensor] : model) {
    inModel[name] = true;
    const auto found = byName.find(name);
    if (found == byName.end()) {
      mismatches.push_back("missing " + std::string(kind) + " " + name);
      continue;
    }
    const StoredTensor& saved = *found->second;
    if (saved.dtype != tensor.dtype() || saved.shape != tensor.shape()) {
      mismatches.push_back(std::string(kind) + " " + name + ": checkpoint " +
                           describeTensor(saved.dtype, saved.shape) + ", model " +
                           tensor.describe());
    }
  }
  for (const StoredTensor& tensor : stored) {
    if (!inModel.count(tensor.name)) {
      mismatches.push_back("unexpected " + std::string(kind) + " " + tensor.name +
                           " (not in the model)");
    }
  }
}

// Into a tensor on any device: a device tensor receives a host copy of the stored bytes.
void copyInto(Tensor& target, const StoredTensor& stored, const std::vector<uint8_t>& file) {
  if (target.device().type() == DeviceType::CPU) {
    std::memcpy(target.rawData(), file.data() + stored.offset, stored.bytes);
    return;
  }
  Tensor staging = Tensor::empty(target.shape(), target.dtype());
  std::memcpy(staging.rawData(), file.data() + stored.offset, stored.bytes);
  target.copyFrom(staging);
}

std::string formatFloat(float value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

}  // namespace

void saveCheckpoint(const std::string& path, const Module& model, Sgd* optimizer,
                    const TrainingState& state) {
  const auto parameters = model.namedParameters();
  const auto buffers = model.namedBuffers();
  // Everything that can be refused is refused before a file exists.
  if (optimizer != nullptr) checkOptimizerMatchesModel(parameters, *optimizer);

  TemporaryFile temporary(path + ".tmp-" + std::to_string(::getpid()));
  try {
    temporary.open();
    // The header is written last, once the length and checksum are known.
    PayloadWriter writer(temporary.fd(), temporary.path());
    const uint8_t placeholder[kHeaderBytes] = {};
    writer.writeAll(placeholder, kHeaderBytes);  // outside the checksum
    writer.string(state.modelName);
    writer.scalar<int64_t>(state.epoch);
    writer.scalar<int64_t>(state.step);
    for (const auto* entries : {&state.rngStates, &state.metadata}) {
      writer.scalar<uint32_t>(static_cast<uint32_t>(entries->size()));
      for (const auto& [key, value] : *entries) {
        writer.string(key);
        writer.string(value);
      }
    }
    writer.scalar<uint32_t>(static_cast<uint32_t>(parameters.size()));
    for (const auto& [name, parameter] : parameters) writer.tensor(name, parameter.tensor());
    writer.scalar<uint32_t>(static_cast<uint32_t>(buffers.size()));
    for (const auto& [name, buffer] : buffers) writer.tensor(name, buffer);
    if (optimizer == nullptr) {
      writer.scalar<uint8_t>(kNoOptimizer);
    } else {
      const SgdOptions& options = optimizer->options();
      writer.scalar<uint8_t>(kSgdOptimizer);
      writer.scalar<float>(options.learningRate);
      writer.scalar<float>(options.momentum);
      writer.scalar<float>(options.dampening);
      writer.scalar<float>(options.weightDecay);
      writer.scalar<uint8_t>(options.nesterov ? 1 : 0);
      const auto& momentum = optimizer->momentumBuffers();
      const auto present = std::count_if(momentum.begin(), momentum.end(),
                                         [](const Tensor& buffer) { return buffer.defined(); });
      writer.scalar<uint32_t>(static_cast<uint32_t>(present));
      for (size_t i = 0; i < momentum.size(); ++i) {
        if (momentum[i].defined()) writer.tensor(parameters[i].first, momentum[i]);
      }
    }
    writer.flush();

    uint8_t headerBytes[kHeaderBytes];
    const uint32_t version = kCheckpointFormatVersion;
    const uint32_t crc = writer.crc();
    const uint64_t length = kHeaderBytes + writer.length();
    std::memcpy(headerBytes, kMagic, 8);
    std::memcpy(headerBytes + 8, &version, 4);
    std::memcpy(headerBytes + 12, &crc, 4);
    std::memcpy(headerBytes + 16, &length, 8);
    const ssize_t written = ::pwrite(temporary.fd(), headerBytes, kHeaderBytes, 0);
    if (written != static_cast<ssize_t>(kHeaderBytes)) {
      IMERGE_FAIL("cannot write the header of ", temporary.path(), ": ",
                  written < 0 ? errnoText(errno) : "short write");
    }
    temporary.syncAndClose();
    temporary.renameTo(path);
  } catch (const Error& error) {
    // The temporary file is removed when `temporary` goes out of scope.
    throw Error("cannot save checkpoint " + path + ": " + error.what());
  }
  syncDirectoryOf(path);
}

TrainingState loadCheckpoint(const std::string& path, const std::string& modelName, Module& model,
                             Sgd* optimizer) {
  StoredCheckpoint checkpoint = readCheckpoint(path);
  if (checkpoint.state.modelName != modelName) {
    IMERGE_FAIL("checkpoint ", path, " was saved from model ", checkpoint.state.modelName, ", not ",
                modelName);
  }

  const auto namedParameters = model.namedParameters();
  std::vector<std::pair<std::string, Tensor>> parameters;
  for (const auto& [name, parameter] : namedParameters) {
    parameters.emplace_back(name, parameter.tensor());
  }
  auto buffers = model.namedBuffers();

  std::vector<std::string> mismatches;
  compareTensors("parameter", checkpoint.parameters, parameters, mismatches);
  compareTensors("buffer", checkpoint.buffers, buffers, mismatches);

  std::unordered_map<std::string, size_t> parameterIndex;
  for (size_t i = 0; i < parameters.size(); ++i) parameterIndex[parameters[i].first] = i;
  if (optimizer != nullptr) {
    checkOptimizerMatchesModel(namedParameters, *optimizer);
    const SgdOptions& saved = checkpoint.sgdOptions;
    const SgdOptions& current = optimizer->options();
    if (!checkpoint.hasOptimizer) {
      mismatches.push_back("the checkpoint holds no optimizer state");
    } else {
      // A different momentum or decay would make the resumed run a different run.
      const auto compare = [&](const char* what, float savedValue, float currentValue) {
        if (savedValue != currentValue) {
          mismatches.push_back(std::string("SGD ") + what + ": checkpoint " +
                               formatFloat(savedValue) + ", this run " + formatFloat(currentValue));
        }
      };
      compare("momentum", saved.momentum, current.momentum);
      compare("dampening", saved.dampening, current.dampening);
      compare("weight decay", saved.weightDecay, current.weightDecay);
      if (saved.nesterov != current.nesterov) {
        mismatches.push_back(std::string("SGD Nesterov: checkpoint ") +
                             (saved.nesterov ? "on" : "off") + ", this run " +
                             (current.nesterov ? "on" : "off"));
      }
      // Momentum buffers have their parameters' shapes; checked only when the parameters fit,
      // so a different architecture is not reported twice.
      const bool parametersFit = mismatches.empty();
      for (const StoredTensor& buffer : checkpoint.momentumBuffers) {
        if (!parametersFit) break;
        const auto found = parameterIndex.find(buffer.name);
        if (found == parameterIndex.end()) {
          mismatches.push_back("momentum buffer for unknown parameter " + buffer.name);
        } else if (buffer.dtype != DType::Float32 ||
                   buffer.shape != parameters[found->second].second.shape()) {
          mismatches.push_back("momentum buffer " + buffer.name + ": checkpoint " +
                               describeTensor(buffer.dtype, buffer.shape) + ", model " +
                               parameters[found->second].second.describe());
        }
      }
    }
  }

  if (!mismatches.empty()) {
    constexpr size_t kShown = 10;
    std::string message = "checkpoint " + path + " does not fit model " + modelName + ":";
    for (size_t i = 0; i < std::min(mismatches.size(), kShown); ++i) {
      message += "\n  " + mismatches[i];
    }
    if (mismatches.size() > kShown) {
      message += "\n  ... and " + std::to_string(mismatches.size() - kShown) + " more";
    }
    IMERGE_FAIL(message);
  }

  // Every check passed: from here on nothing can be refused.
  std::unordered_map<std::string, const StoredTensor*> stored;
  for (const StoredTensor& tensor : checkpoint.parameters) stored[tensor.name] = &tensor;
  for (auto& [name, tensor] : parameters) copyInto(tensor, *stored.at(name), checkpoint.file);
  stored.clear();
  for (const StoredTensor& tensor : checkpoint.buffers) stored[tensor.name] = &tensor;
  for (auto& [name, tensor] : buffers) copyInto(tensor, *stored.at(name), checkpoint.file);

  if (optimizer != nullptr) {
    optimizer->setLearningRate(checkpoint.sgdOptions.learningRate);
    auto& momentum = optimizer->momentumBuffers();
    for (Tensor& buffer : momentum) buffer = Tensor();
    for (const StoredTensor& saved : checkpoint.momentumBuffers) {
      const size_t index = parameterIndex.at(saved.name);
      Tensor& buffer = momentum[index];
      // Where the parameter lives, as the optimizer would have made it.
      buffer = Tensor::empty(saved.shape, saved.dtype, parameters[index].second.device());
      copyInto(buffer, saved, checkpoint.file);
    }
  }
  return checkpoint.state;
}

CheckpointSummary inspectCheckpoint(const std::string& path) {
  const StoredCheckpoint checkpoint = readCheckpoint(path);
  const auto infos = [](const std::vector<StoredTensor>& tensors) {
    std::vector<CheckpointTensorInfo> list;
    for (const StoredTensor& tensor : tensors)
      list.push_back({tensor.name, tensor.dtype, tensor.shape});
    return list;
  };
  CheckpointSummary summary;
  summary.formatVersion = checkpoint.formatVersion;
  summary.state = checkpoint.state;
  summary.parameters = infos(checkpoint.parameters);
  summary.buffers = infos(checkpoint.buffers);
  summary.hasOptimizer = checkpoint.hasOptimizer;
  summary.sgdOptions = checkpoint.sgdOptions;
  for (const StoredTensor& tensor : checkpoint.momentumBuffers) {
    summary.momentumParameters.push_back(tensor.name);
  }
  return summary;
}

}  // namespace imerge::io
