// Ranks that post different collectives get a named error on every rank, never a crash: the
// MpiCommunicator compares every rank's next collective before posting it (MpiOptions::
// checkCollectiveShapes). Without that, Open MPI matches one rank's all-reduce with another
// rank's collective of another size: MPI_ERR_TRUNCATE, then memory corruption and SIGABRT.
//
//   mpirun -np N mismatched_collectives_mpitest --case=count|operation|barrier
//     count      rank r all-reduces 100 - 40 r floats ("bucket 3")
//     operation  rank 0 all-reduces 2 floats, the others all-reduce 2 int64 (max)
//     barrier    rank 0 waits in a barrier, the others post one more all-reduce
//
// Each rank prints "refused on rank R: <message>" and exits 0 when its error names every
// rank's collective, 1 otherwise (a crash or a hang is a failure too: CTest's time-out).
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"
#include "distributed/comm/mpi_communicator.h"

namespace imerge::distributed {
namespace {

// What this rank posts for `testCase`, returning the error it got ("" if none).
std::string postMismatched(MpiCommunicator& world, const std::string& testCase) {
  const int rank = world.rank();
  try {
    if (testCase == "count") {
      std::vector<float> values(static_cast<size_t>(100 - 40 * rank), 1.0f);
      world.allreduceSumAsync(values.data(), values.size(), "bucket 3")->wait();
    } else if (testCase == "operation") {
      float sums[2] = {1, 2};
      int64_t maxima[2] = {1, 2};
      if (rank == 0) {
        world.allreduceSumAsync(sums, 2, "loss sum")->wait();
      } else {
        world.allreduceMax(maxima, 2);
      }
    } else {
      if (rank == 0) {
        world.barrier();
      } else {
        float value = 1;
        world.allreduceSumAsync(&value, 1, "one bucket too many")->wait();
      }
    }
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

// The clause of rank `rank`'s collective that every rank's message must hold.
std::string expectedClause(const std::string& testCase, int rank) {
  const std::string who = "rank " + std::to_string(rank) + " posts ";
  if (testCase == "count") {
    return who + "all-reduce of " + std::to_string(100 - 40 * rank) + " x 4 bytes ('bucket 3')";
  }
  if (testCase == "operation") {
    return who + (rank == 0 ? "all-reduce of 2 x 4 bytes ('loss sum')"
                            : "all-reduce (max) of 2 x 8 bytes ('all-reduce max')");
  }
  return who + (rank == 0 ? "barrier ('barrier')" : "all-reduce of 1 x 4 bytes");
}

}  // namespace
}  // namespace imerge::distributed

int main(int argc, char** argv) {
  using namespace imerge::distributed;
  std::string testCase;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--case=", 7) == 0) testCase = argv[i] + 7;
  }
  if (testCase != "count" && testCase != "operation" && testCase != "barrier") {
    std::fprintf(stderr, "mismatched_collectives_mpitest: --case=count|operation|barrier\n");
    return 2;
  }
  MpiCommunicator world(MpiOptions{.timeoutSeconds = 20});
  const std::string message = postMismatched(world, testCase);
  bool named = message.find("the ranks posted different collectives") != std::string::npos;
  for (int rank = 0; rank < world.size(); ++rank) {
    named = named && message.find(expectedClause(testCase, rank)) != std::string::npos;
  }
  std::printf("%s on rank %d: %s\n", named ? "refused" : "NOT REFUSED AS EXPECTED", world.rank(),
              message.empty() ? "(no error)" : message.c_str());
  std::fflush(stdout);
  try {
    world.shutdown();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "rank %d: shutdown failed: %s\n", world.rank(), error.what());
    return 1;
  }
  return named ? 0 : 1;
}
