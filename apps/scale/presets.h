// imerge-scale's presets: published settings, reproduced from their published inputs only.
//
//   imerge-paper        the IMerge paper: ResNet-18, VGG-16, AlexNet, ResNet-50 at 224x224, batch
//                       32 per worker, 4-32 workers, the single-worker throughputs it reports
//                       (282, 313, 1951 and 141 images/s) and its cluster: its small-message
//                       costs below 32768 elements, MG-WFBP's 56Gb InfiniBand a + bM above
//                       (paper-small+56gb-ib).
//   ddl-resnet50-10gbe  HKBU-HPML/ddl-benchmarks (results of 2020-05-29): ResNet-50, batch 64 per
//                       worker, one worker 253.1 images/s, MG-WFBP's 10GbE a + bM constants, 4-32
//                       workers; its measured images/s come along as "published" rows.
//   imerge, singa       the older studies: the IMerge models (or SINGA's ResNet-50 at 1-32
//                       workers) on the default cluster (paper-small+10gbe), with a compute input to give.
// A preset fills only what the command line leaves out.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace imerge::apps {

struct PublishedThroughput {
  std::string model;
  std::string strategy;
  int workers = 0;
  double imagesPerSecond = 0;
};

struct Preset {
  std::string name;
  std::string description;  // for --help
  std::vector<std::string> models;
  int64_t batchSize = 32;
  std::vector<int> workers;
  std::string cluster;                                   // empty: the default
  std::vector<std::string> singleWorkerImagesPerSecond;  // MODEL=X entries
  std::vector<PublishedThroughput> published;
};

const std::vector<Preset>& presets();
// The preset of that name; an imerge::Error lists the names otherwise.
const Preset& presetNamed(const std::string& name);

}  // namespace imerge::apps
