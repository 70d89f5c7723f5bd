// What the launcher (mpirun, mpiexec, srun) tells a process about its job, read from the
// environment before MPI is initialised: apps size thread pools and choose GPUs from it.
#pragma once

namespace imerge::distributed {

// True when this process was started by mpirun/mpiexec (or a PMI launcher such as srun).
bool launchedByMpirun();
// The number of ranks mpirun started on this machine (OMPI_COMM_WORLD_LOCAL_SIZE); 1 otherwise.
// Apps use it to size their thread pools: threads per rank = cores / local ranks.
int localRankCount();
// This rank's index among the ranks on this machine (OMPI_COMM_WORLD_LOCAL_RANK); 0 otherwise.
// Chooses the GPU of a rank.
int localRank();

}  // namespace imerge::distributed
