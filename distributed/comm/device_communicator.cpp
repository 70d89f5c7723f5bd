// The choice of a rank's GPU (the factories live with their backends in cuda/, and their
// refusals in no_cuda/device_backends.cpp for builds without CUDA).
#include "distributed/comm/device_communicator.h"

#include "core/error.h"

namespace imerge::distributed {

int gpuForLocalRank(int localRank, int localRanks, int gpuCount, bool exclusive,
                    const std::string& backend, const std::string& whyNoGpu) {
  IMERGE_CHECK(localRanks >= 1 && localRank >= 0 && localRank < localRanks,
               "gpuForLocalRank: local rank ", localRank, " of ", localRanks,
               " is not a rank of this machine");
  IMERGE_CHECK(gpuCount > 0, "--dist-backend ", backend, " with --device cuda: local rank ",
               localRank, " has no usable GPU", whyNoGpu.empty() ? "" : " (" + whyNoGpu + ")",
               ". Run on a machine with NVIDIA GPUs, or train on the CPU (--device cpu)");
  IMERGE_CHECK(!exclusive || localRanks <= gpuCount, "--dist-backend ", backend, ": ", localRanks,
               " ranks on this machine but only ", gpuCount,
               " GPU(s); NCCL needs a GPU of its own for every rank (it refuses two ranks on one "
               "GPU). Start at most ",
               gpuCount, " ranks per machine (mpirun -np ", gpuCount,
               "), or let ranks share GPUs through host copies with --dist-backend mpi");
  return localRank % gpuCount;
}

}  // namespace imerge::distributed
