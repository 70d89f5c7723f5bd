// The shape check's comparison and message (distributed/comm/collective_shape.h), without MPI: the
// same collective agrees whatever its label; a different count, operation, element size or
// root is a disagreement naming every rank's collective; a label that arrives unterminated is
// read only as far as its field.
#include "distributed/comm/collective_shape.h"

#include <gtest/gtest.h>

#include <cstring>

#include "support/error_text.h"

namespace imerge::distributed {
namespace {

using testing::expectContains;

CollectiveShape sum(size_t count, const std::string& label = "bucket 3") {
  return CollectiveShape::of(CollectiveOperation::AllreduceSum, count, 4, 0, label);
}

TEST(CollectiveShape, TheSameCollectiveAgreesWhateverItsLabel) {
  EXPECT_EQ(describeShapeDisagreement({sum(100, "bucket 3"), sum(100, "bucket 3 on rank 1")}), "");
  EXPECT_EQ(describeShapeDisagreement({sum(100)}), "");
}

TEST(CollectiveShape, EachDifferenceNamesEveryRanksCollective) {
  expectContains(describeShapeDisagreement({sum(100), sum(60), sum(100)}),
                 "the ranks posted different collectives: rank 0 posts all-reduce of 100 x 4 "
                 "bytes ('bucket 3'); rank 1 posts all-reduce of 60 x 4 bytes ('bucket 3'); "
                 "rank 2 posts all-reduce of 100 x 4 bytes ('bucket 3')");
  const CollectiveShape maxima =
      CollectiveShape::of(CollectiveOperation::AllreduceMax, 25, 4, 0, "bucket 3");
  expectContains(describeShapeDisagreement({sum(25), maxima}),
                 "rank 1 posts all-reduce (max) of 25 x 4 bytes");
  const CollectiveShape fromZero =
      CollectiveShape::of(CollectiveOperation::Broadcast, 8, 1, 0, "state");
  const CollectiveShape fromOne =
      CollectiveShape::of(CollectiveOperation::Broadcast, 8, 1, 1, "state");
  expectContains(describeShapeDisagreement({fromZero, fromOne}),
                 "rank 0 posts broadcast of 8 x 1 bytes from rank 0 ('state'); rank 1 posts "
                 "broadcast of 8 x 1 bytes from rank 1 ('state')");
  const CollectiveShape barrier = CollectiveShape::of(CollectiveOperation::Barrier, 0, 0, 0, "b");
  expectContains(describeShapeDisagreement({barrier, sum(1, "extra")}),
                 "rank 0 posts barrier ('b'); rank 1 posts all-reduce of 1 x 4 bytes ('extra')");
}

TEST(CollectiveShape, LongOrUnterminatedLabelsStayInTheirField) {
  CollectiveShape shape = sum(1, std::string(200, 'x'));
  EXPECT_EQ(std::strlen(shape.label), sizeof shape.label - 1);
  std::memset(shape.label, 'y', sizeof shape.label);  // as garbage from another rank might be
  EXPECT_EQ(shape.describe(), "all-reduce of 1 x 4 bytes ('" + std::string(48, 'y') + "')");
}

}  // namespace
}  // namespace imerge::distributed
