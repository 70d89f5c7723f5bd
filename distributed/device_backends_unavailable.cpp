// The device backends' answer in a build without CUDA: the factories of device_communicator.h
// and device_step_events.h exist in every build so that the Reducer, DataParallel and the apps
// compile once; here each says why it cannot run. (A CUDA tensor cannot exist in such a build,
// so only an explicit request reaches them, e.g. imerge-train --device cuda.)
#ifndef IMERGE_HAVE_CUDA

#include "core/error.h"
#include "distributed/device_communicator.h"
#include "distributed/device_step_events.h"

namespace imerge::distributed {

namespace {
[[noreturn]] void unavailable(const char* what) {
  IMERGE_FAIL(what,
              ": this build of imerge has no CUDA support (nvcc was not found at build time), so "
              "gradients cannot live on a GPU; rebuild on a machine with the CUDA toolkit, or "
              "train on the CPU");
}
}  // namespace

std::unique_ptr<DeviceCommunicator> makeNcclCommunicator(Communicator&, int, double) {
  unavailable("the NCCL backend");
}

std::unique_ptr<DeviceCommunicator> makeStagingCommunicator(Communicator&, int) {
  unavailable("the MPI staging backend for device buffers");
}

std::unique_ptr<DeviceStepEvents> makeDeviceStepEvents(Device&) {
  unavailable("CUDA events for device gradients");
}

}  // namespace imerge::distributed

#endif  // IMERGE_HAVE_CUDA
