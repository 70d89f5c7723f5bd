#include "core/gpu_policy/cuda_settings.h"

#include <mutex>

namespace imerge::cuda {

namespace {
std::mutex settingsMutex;
CudaSettings currentSettings;
}  // namespace

void setCudaSettings(const CudaSettings& settings) {
  std::lock_guard<std::mutex> lock(settingsMutex);
  currentSettings = settings;
}

CudaSettings cudaSettings() {
  std::lock_guard<std::mutex> lock(settingsMutex);
  return currentSettings;
}

}  // namespace imerge::cuda
