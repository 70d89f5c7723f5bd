#include "training/dataset_agreement.h"

#include <algorithm>
#include <map>
#include <sstream>

namespace imerge::training {
namespace {

// One figure's value on each rank, and how a clause names it.
struct Figure {
  const char* verb;        // "reads", for one rank
  const char* pluralVerb;  // "read", for several
  const char* noun;        // "training images"
  bool nounFirst;          // "reads images of shape [..]" rather than "reads 64 training images"
  bool withSource;         // a count of images read from somewhere
  std::string (*value)(const DatasetFigures&);
};

std::string shapeText(const Shape& shape) {
  std::string text = "[";
  for (size_t d = 0; d < shape.size(); ++d) text += (d ? ", " : "") + std::to_string(shape[d]);
  return text + "]";
}

const Figure kFigures[] = {
    {"reads", "read", "training images", false, true,
     [](const DatasetFigures& f) { return std::to_string(f.trainImages); }},
    {"reads", "read", "test images", false, true,
     [](const DatasetFigures& f) { return std::to_string(f.testImages); }},
    {"runs", "run", "training steps per epoch", false, false,
     [](const DatasetFigures& f) { return std::to_string(f.stepsPerEpoch); }},
    {"runs", "run", "evaluation steps", false, false,
     [](const DatasetFigures& f) { return std::to_string(f.evaluationSteps); }},
    {"has", "have", "classes", false, false,
     [](const DatasetFigures& f) { return std::to_string(f.classes); }},
    {"reads", "read", "images of shape", true, false,
     [](const DatasetFigures& f) { return shapeText(f.imageShape); }},
};

std::string rankList(const std::vector<int>& ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i) text += (i ? ", " : "") + std::to_string(ranks[i]);
  return text;
}

// "rank 1 reads 40 training images from B, rank 0 reads 64 from A": the groups without rank 0
// first (they are the ones that differ from the rank that prints), the unit only once.
std::string clause(const Figure& figure, const std::vector<DatasetFigures>& perRank) {
  std::map<std::string, std::vector<int>> ranksByValue;
  for (size_t rank = 0; rank < perRank.size(); ++rank) {
    ranksByValue[figure.value(perRank[rank])].push_back(static_cast<int>(rank));
  }
  if (ranksByValue.size() == 1) return "";
  std::vector<std::pair<std::string, std::vector<int>>> groups(ranksByValue.begin(),
                                                               ranksByValue.end());
  std::stable_partition(groups.begin(), groups.end(),
                        [](const auto& group) { return group.second.front() != 0; });
  std::string text;
  for (const auto& [value, ranks] : groups) {
    const bool first = text.empty();
    text += (first ? "" : ", ") + rankList(ranks) + " " +
            (ranks.size() == 1 ? figure.verb : figure.pluralVerb) + " ";
    if (!first) {
      text += value;
    } else if (figure.nounFirst) {
      text += std::string(figure.noun) + " " + value;
    } else {
      text += value + " " + figure.noun;
    }
    if (figure.withSource) text += " from " + perRank[static_cast<size_t>(ranks.front())].source;
  }
  return text;
}

}  // namespace

std::string DatasetFigures::encode() const {
  std::ostringstream out;
  out << trainImages << ' ' << testImages << ' ' << stepsPerEpoch << ' ' << evaluationSteps << ' '
      << classes << ' ' << imageShape.size();
  for (int64_t extent : imageShape) out << ' ' << extent;
  out << ' ' << source;
  return out.str();
}

DatasetFigures DatasetFigures::decode(const std::string& text) {
  std::istringstream in(text);
  DatasetFigures figures;
  size_t dimensions = 0;
  in >> figures.trainImages >> figures.testImages >> figures.stepsPerEpoch >>
      figures.evaluationSteps >> figures.classes >> dimensions;
  IMERGE_CHECK(in && dimensions <= 8, "dataset figures from another rank are garbled: '", text,
               "'");
  figures.imageShape.resize(dimensions);
  for (int64_t& extent : figures.imageShape) in >> extent;
  in.get();  // the space before the source, which may hold spaces itself
  std::getline(in, figures.source);
  return figures;
}

std::string describeDatasetDisagreement(const std::vector<DatasetFigures>& perRank) {
  std::string clauses;
  for (const Figure& figure : kFigures) {
    const std::string text = clause(figure, perRank);
    if (!text.empty()) clauses += (clauses.empty() ? "" : "; ") + text;
  }
  if (clauses.empty()) return "";
  return "the ranks read different datasets: " + clauses +
         "; every rank must read the same dataset (give each node a complete copy of the same "
         "files, or point --data-dir at a folder every node shares)";
}

void requireSameDatasetOnEveryRank(distributed::Communicator& communicator,
                                   const DatasetFigures& mine) {
  std::vector<DatasetFigures> perRank;
  for (const std::string& text : communicator.allgatherText(mine.encode())) {
    perRank.push_back(DatasetFigures::decode(text));
  }
  const std::string disagreement = describeDatasetDisagreement(perRank);
  if (!disagreement.empty()) throw distributed::RanksDisagree(disagreement);
}

}  // namespace imerge::training
