// The start of every multi-rank GoogleTest program (*_mpitest.cpp): the MPI communicator for the
// whole job, and one rank's test output instead of N interleaved copies.
#pragma once

#include <memory>

#include "distributed/comm/mpi_communicator.h"

namespace imerge::test {

// Starts MPI through an MpiCommunicator and removes GoogleTest's result printer on every rank
// but 0 (their failures still count: each program agrees on one verdict). Returns null, having
// printed "PROGRAM: reason" to stderr, when MPI cannot start.
std::unique_ptr<distributed::MpiCommunicator> startMpiTestWorld(
    const char* program, const distributed::MpiOptions& options = {});

}  // namespace imerge::test
