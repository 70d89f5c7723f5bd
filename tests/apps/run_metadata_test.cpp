// RecordedRun: a checkpoint's metadata read back, each refusal naming the checkpoint and the key;
// class names through joinLines and splitLines.
#include "apps/run_metadata.h"

#include <gtest/gtest.h>

#include "support/error_text.h"

namespace imerge::apps {
namespace {

using testing::errorMessage;
using testing::expectContains;

const RecordedRun kRecorded("--resume: ck/last.ckpt", {{run_keys::kDataset, "fashion-mnist"},
                                                       {run_keys::kImageSize, "28"},
                                                       {run_keys::kSeed, "0"},
                                                       {run_keys::kEpochLossSum, "123.25"},
                                                       {run_keys::kClasses, "ten"},
                                                       {run_keys::kBatchSize, "-3"},
                                                       {run_keys::kEpochCorrect, "nan"}});

TEST(RecordedRun, ReadsWhatTheRunRecorded) {
  EXPECT_EQ(kRecorded.text(run_keys::kDataset), "fashion-mnist");
  EXPECT_EQ(kRecorded.wholeNumber(run_keys::kImageSize, 1), 28);
  EXPECT_EQ(kRecorded.wholeNumber(run_keys::kSeed), 0);
  EXPECT_EQ(kRecorded.number(run_keys::kEpochLossSum), 123.25);
  EXPECT_EQ(kRecorded.find(run_keys::kDataDir), nullptr);
}

TEST(RecordedRun, RefusesMissingAndMalformedEntriesNamingTheCheckpointAndTheKey) {
  expectContains(errorMessage([] { kRecorded.text(run_keys::kDataDir); }),
                 "--resume: ck/last.ckpt does not record its data_dir (it was written by an older "
                 "imerge-train)");
  expectContains(errorMessage([] { kRecorded.wholeNumber(run_keys::kClasses, 1); }),
                 "--resume: ck/last.ckpt holds 'ten' as its classes, which is not a whole number "
                 "of at least 1");
  expectContains(errorMessage([] { kRecorded.wholeNumber(run_keys::kBatchSize, 1); }),
                 "holds '-3' as its batch_size");
  expectContains(errorMessage([] { kRecorded.wholeNumber(run_keys::kSeed, 1); }),
                 "holds '0' as its seed, which is not a whole number of at least 1");
  expectContains(errorMessage([] { kRecorded.number(run_keys::kEpochCorrect); }),
                 "holds 'nan' as its epoch_correct, which is not a finite number");
  expectContains(errorMessage([] { kRecorded.number(run_keys::kDataset); }),
                 "holds 'fashion-mnist' as its dataset, which is not a finite number");
}

TEST(RunMetadata, ClassNamesRoundTripThroughLines) {
  const std::vector<std::string> names = {"ant", "bee", "Ankle boot"};
  EXPECT_EQ(joinLines(names), "ant\nbee\nAnkle boot");
  EXPECT_EQ(splitLines(joinLines(names)), names);
  EXPECT_EQ(splitLines("one"), std::vector<std::string>{"one"});
}

}  // namespace
}  // namespace imerge::apps
