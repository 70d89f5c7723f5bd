#include "support/mpi_test_world.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <exception>

namespace imerge::test {

std::unique_ptr<distributed::MpiCommunicator> startMpiTestWorld(
    const char* program, const distributed::MpiOptions& options) {
  std::unique_ptr<distributed::MpiCommunicator> communicator;
  try {
    communicator = std::make_unique<distributed::MpiCommunicator>(options);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s: %s\n", program, error.what());
    return nullptr;
  }
  if (communicator->rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  return communicator;
}

}  // namespace imerge::test
