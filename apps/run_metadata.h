// What imerge-train records of a run in its checkpoints' metadata, beside the tensors, and how
// the apps read it back: the keys in one place, every refusal naming the checkpoint and the key.
// With it --evaluate-only and imerge-predict rebuild the model and prepare the images without the
// user repeating a flag, and --resume continues a run stopped in the middle of an epoch.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace imerge::apps {

namespace run_keys {
// Every checkpoint.
inline constexpr char kDataset[] = "dataset";
inline constexpr char kDataDir[] = "data_dir";
inline constexpr char kImageSize[] = "image_size";
inline constexpr char kClasses[] = "classes";
inline constexpr char kSmallImages[] = "small_images";  // "1" or "0"
inline constexpr char kSeed[] = "seed";
inline constexpr char kBatchSize[] = "batch_size";
inline constexpr char kClassNames[] = "class_names";  // image folders: one per line, by label
// A checkpoint written in the middle of an epoch (a stop signal): where it stopped, and the
// epoch's figures so far, every rank's.
inline constexpr char kStepsIntoEpoch[] = "steps_into_epoch";
inline constexpr char kEpochLossSum[] = "epoch_loss_sum";
inline constexpr char kEpochCorrect[] = "epoch_correct";
inline constexpr char kEpochImages[] = "epoch_images";
}  // namespace run_keys

// "a\nb" for {"a", "b"} and back: class names, which hold no line breaks.
std::string joinLines(const std::vector<std::string>& lines);
std::vector<std::string> splitLines(const std::string& text);

// A checkpoint's metadata, read. `source` names it in every refusal ("--resume: ck/last.ckpt").
class RecordedRun {
 public:
  RecordedRun(std::string source, std::map<std::string, std::string> metadata);

  // The entry, or null when the run did not record it.
  const std::string* find(const char* key) const;
  // The entry, refused when missing: the checkpoint was written by an older imerge-train.
  const std::string& text(const char* key) const;
  // The entry as a whole number of at least `minimum`, refused when missing or not one.
  int64_t wholeNumber(const char* key, int64_t minimum = 0) const;
  // The entry as a finite number, refused when missing or not one.
  double number(const char* key) const;

 private:
  std::string source_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace imerge::apps
