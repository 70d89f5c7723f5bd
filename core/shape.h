// A tensor's shape: sizes per dimension, outermost first (NCHW for images).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace imerge {

using Shape = std::vector<int64_t>;

int64_t shapeNumel(const Shape& shape);
std::string shapeToString(const Shape& shape);  // "[16, 3, 28, 28]"

}  // namespace imerge
