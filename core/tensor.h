// Tensor: a shape, an element type and a view into shared storage on a device.
//
// Tensors are dense and contiguous (row-major, NCHW for images). Copying a Tensor is cheap and
// shares the storage; reshape() and flatView() return views of the same storage, which is how
// parameters' gradients become slices of one flat buffer. clone() makes a deep copy.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/shape.h"

namespace imerge {

// A block of device memory, returned to the device's allocator when the last tensor lets go.
class Storage {
 public:
  Storage(Device& device, size_t bytes);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  Device& device() const { return *device_; }

 private:
  Device* device_;
  void* data_;
  size_t bytes_;
};

class Tensor {
 public:
  Tensor() = default;  // undefined: holds no storage

  // New storage; empty() leaves the contents uninitialised.
  static Tensor empty(const Shape& shape, DType dtype = DType::Float32,
                      Device& device = cpuDevice());
  static Tensor zeros(const Shape& shape, DType dtype = DType::Float32,
                      Device& device = cpuDevice());
  static Tensor full(const Shape& shape, float value, Device& device = cpuDevice());
  // On the other tensor's device.
  static Tensor emptyLike(const Tensor& other) {
    return empty(other.shape(), other.dtype(), other.device());
  }
  static Tensor zerosLike(const Tensor& other) {
    return zeros(other.shape(), other.dtype(), other.device());
  }
  // Copies host values in; the value count must equal the shape's element count.
  static Tensor fromVector(const std::vector<float>& values, const Shape& shape);
  static Tensor fromVector(const std::vector<int64_t>& values, const Shape& shape);
  static Tensor fromVector(const std::vector<int32_t>& values, const Shape& shape);

  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  // Size of one dimension; negative counts from the end, as in PyTorch.
  int64_t dim(int index) const;
  int64_t numel() const { return numel_; }
  DType dtype() const { return dtype_; }
  size_t bytes() const { return static_cast<size_t>(numel_) * dtypeSize(dtype_); }
  Device& device() const;

  // Typed element access; throws if T does not match dtype().
  template <typename T>
  T* data() {
    checkDType(DTypeOf<T>::value);
    return reinterpret_cast<T*>(rawData());
  }
  template <typename T>
  const T* data() const {
    checkDType(DTypeOf<T>::value);
    return reinterpret_cast<const T*>(rawData());
  }
  void* rawData() const;

  // A view with another shape of the same element count; one size may be -1 (inferred).
  Tensor reshape(const Shape& shape) const;
  // A view of `shape` starting `elementOffset` elements into this tensor's storage span.
  Tensor flatView(int64_t elementOffset, const Shape& shape) const;

  Tensor clone() const;
  // A copy on `device`; this tensor itself (no copy) when it is already there.
  Tensor to(Device& device) const;
  // Same shape and dtype; host <-> device copies go through the device's stream and return
  // when the destination holds the data.
  void copyFrom(const Tensor& source);
  void fill(float value);  // float32 on any device; int32/int64 on the CPU
  void zero();

  std::vector<float> toVector() const;  // float32 only, copied to the host
  float item() const;                   // a one-element float32 tensor's value, on the host

  bool sharesStorageWith(const Tensor& other) const {
    return storage_ && storage_ == other.storage_;
  }
  // True when no other tensor refers to this one's storage and it spans all of it: a result
  // nobody else holds, which can be kept instead of copied (a gradient taken by a leaf).
  bool ownsStorageAlone() const {
    return storage_ && storage_.use_count() == 1 && offset_ == 0 && bytes() == storage_->bytes();
  }
  // "float32[16, 3, 28, 28]", for error messages.
  std::string describe() const;

 private:
  void checkDType(DType wanted) const;

  std::shared_ptr<Storage> storage_;
  int64_t offset_ = 0;  // in elements
  Shape shape_;
  int64_t numel_ = 0;
  DType dtype_ = DType::Float32;
};

}  // namespace imerge
