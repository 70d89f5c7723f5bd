// The device communicators' answer in a build without CUDA (this folder, no_cuda/, is compiled
// only there, as cuda/ only in CUDA builds): the factories of device_communicator.h exist in
// every build so that the Reducer, DataParallel and the apps compile once; here each says why
// it cannot run. (A CUDA tensor cannot exist in such a build, so only an explicit request
// reaches them, e.g. imerge-train --device cuda.)

#include "core/error.h"
#include "distributed/comm/device_communicator.h"
#include "distributed/comm/no_cuda/without_cuda.h"

namespace imerge::distributed {

void refuseWithoutCuda(const char* what) {
  IMERGE_FAIL(what,
              ": this build of imerge has no CUDA support (nvcc was not found at build time), so "
              "gradients cannot live on a GPU; rebuild on a machine with the CUDA toolkit, or "
              "train on the CPU");
}

std::unique_ptr<DeviceCommunicator> makeNcclCommunicator(Communicator&, int, double) {
  refuseWithoutCuda("the NCCL backend");
}

std::unique_ptr<DeviceCommunicator> makeStagingCommunicator(Communicator&, int) {
  refuseWithoutCuda("the MPI staging backend for device buffers");
}

}  // namespace imerge::distributed
