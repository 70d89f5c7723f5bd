// Device step events' answer in a build without CUDA (no_cuda/ is compiled only there; the
// CUDA events are in cuda/): makeDeviceStepEvents exists in every build so that the Reducer
// compiles once, and says here why it cannot run.
#include "distributed/runtime/device_step_events.h"

#include "distributed/comm/no_cuda/without_cuda.h"

namespace imerge::distributed {

std::unique_ptr<DeviceStepEvents> makeDeviceStepEvents(Device&) {
  refuseWithoutCuda("CUDA events for device gradients");
}

}  // namespace imerge::distributed
