// The start-up comparison of the ranks' datasets (training/dataset_agreement.h): equal figures
// pass, and each figure that differs gets a clause naming every rank's value, ranks grouped by
// value, those that differ from rank 0 first. The two-rank refusal end to end is
// tests/apps/dist_different_datasets.sh.
#include "training/dataset_agreement.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/error.h"
#include "distributed/comm/communicator.h"
#include "support/error_text.h"

namespace imerge::training {
namespace {

using testing::expectContains;

DatasetFigures mnistFrom(const std::string& folder, int64_t trainImages) {
  return {.trainImages = trainImages,
          .testImages = 16,
          .stepsPerEpoch = (trainImages + 15) / 16,
          .evaluationSteps = 1,
          .classes = 10,
          .imageShape = {1, 28, 28},
          .source = folder};
}

TEST(DatasetAgreement, EqualFiguresAgree) {
  const DatasetFigures figures = mnistFrom("/data/mnist", 64);
  EXPECT_EQ(describeDatasetDisagreement({figures, figures, figures}), "");
  EXPECT_EQ(describeDatasetDisagreement({figures}), "");
}

TEST(DatasetAgreement, TheSourceAloneIsNoDisagreement) {
  // The same files in two folders (each node's own copy) are the same dataset.
  EXPECT_EQ(describeDatasetDisagreement({mnistFrom("/a", 64), mnistFrom("/b", 64)}), "");
}

TEST(DatasetAgreement, NamesEachRanksCountAndFolder) {
  const std::string message = describeDatasetDisagreement({mnistFrom("A", 64), mnistFrom("B", 40)});
  expectContains(message,
                 "the ranks read different datasets: rank 1 reads 40 training images from B, "
                 "rank 0 reads 64 from A; rank 1 runs 3 training steps per epoch, rank 0 runs 4; "
                 "every rank must read the same dataset");
  EXPECT_EQ(message.find("test images"), std::string::npos) << "the test sets agree: " << message;
}

TEST(DatasetAgreement, GroupsRanksWithTheSameValue) {
  DatasetFigures cifar = mnistFrom("C", 64);
  cifar.imageShape = {3, 32, 32};
  cifar.classes = 100;
  const std::string message =
      describeDatasetDisagreement({mnistFrom("A", 64), cifar, mnistFrom("A", 64), cifar});
  expectContains(message, "ranks 1, 3 have 100 classes, ranks 0, 2 have 10");
  expectContains(message,
                 "ranks 1, 3 read images of shape [3, 32, 32], ranks 0, 2 read [1, 28, 28]");
}

TEST(DatasetAgreement, FiguresSurviveTheirEncodingSourceSpacesIncluded) {
  const DatasetFigures figures = mnistFrom("/mnt/my data/mnist", 60000);
  const DatasetFigures decoded = DatasetFigures::decode(figures.encode());
  EXPECT_EQ(decoded.trainImages, 60000);
  EXPECT_EQ(decoded.stepsPerEpoch, figures.stepsPerEpoch);
  EXPECT_EQ(decoded.imageShape, figures.imageShape);
  EXPECT_EQ(decoded.source, "/mnt/my data/mnist");
  expectContains(testing::errorMessage([] { DatasetFigures::decode("12 what"); }), "garbled");
}

TEST(DatasetAgreement, AWorldOfOneAgreesWithItself) {
  distributed::SingleProcessCommunicator world;
  EXPECT_NO_THROW(requireSameDatasetOnEveryRank(world, mnistFrom("A", 64)));
}

}  // namespace
}  // namespace imerge::training
