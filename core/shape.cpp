#include "core/shape.h"

namespace imerge {

int64_t shapeNumel(const Shape& shape) {
  int64_t count = 1;
  for (int64_t size : shape) count *= size;
  return count;
}

std::string shapeToString(const Shape& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

}  // namespace imerge
