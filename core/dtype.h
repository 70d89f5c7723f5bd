// Element types a Tensor can hold. Parameters and activations are float32; labels and indices
// are int32 or int64.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace imerge {

enum class DType { Float32, Int32, Int64 };

constexpr size_t dtypeSize(DType dtype) {
  switch (dtype) {
    case DType::Float32:
    case DType::Int32:
      return 4;
    case DType::Int64:
      return 8;
  }
  return 0;
}

constexpr std::string_view dtypeName(DType dtype) {
  switch (dtype) {
    case DType::Float32:
      return "float32";
    case DType::Int32:
      return "int32";
    case DType::Int64:
      return "int64";
  }
  return "unknown";
}

// Maps a C++ element type to its DType, so data<T>() can check what it is asked for.
template <typename T>
struct DTypeOf;
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::Float32;
};
template <>
struct DTypeOf<int32_t> {
  static constexpr DType value = DType::Int32;
};
template <>
struct DTypeOf<int64_t> {
  static constexpr DType value = DType::Int64;
};

}  // namespace imerge
