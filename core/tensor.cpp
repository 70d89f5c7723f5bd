#include "core/tensor.h"

#include <algorithm>
#include <cstring>

#include "core/backend.h"

namespace imerge {

Storage::Storage(Device& device, size_t bytes)
    : device_(&device), data_(bytes ? device.allocate(bytes) : nullptr), bytes_(bytes) {}

Storage::~Storage() {
  if (data_) device_->deallocate(data_);
}

Tensor Tensor::empty(const Shape& shape, DType dtype, Device& device) {
  for (int64_t size : shape) {
    IMERGE_CHECK(size >= 0, "Tensor: negative size in shape ", shapeToString(shape));
  }
  Tensor tensor;
  tensor.shape_ = shape;
  tensor.numel_ = shapeNumel(shape);
  tensor.dtype_ = dtype;
  try {
    tensor.storage_ = std::make_shared<Storage>(device, tensor.bytes());
  } catch (const OutOfMemoryError& error) {
    // The allocator knows only bytes; the caller needs to know which tensor did not fit.
    throw OutOfMemoryError(detail::concat("out of memory on ", device.name(), ": tensor ",
                                          dtypeName(dtype), shapeToString(shape), " needs ",
                                          tensor.bytes(), " bytes; ", error.what(),
                                          ". Use a smaller batch size or model"));
  }
  return tensor;
}

Tensor Tensor::zeros(const Shape& shape, DType dtype, Device& device) {
  Tensor tensor = empty(shape, dtype, device);
  tensor.zero();
  return tensor;
}

Tensor Tensor::full(const Shape& shape, float value, Device& device) {
  Tensor tensor = empty(shape, DType::Float32, device);
  tensor.fill(value);
  return tensor;
}

namespace {
template <typename T>
Tensor fromHostValues(const std::vector<T>& values, const Shape& shape) {
  IMERGE_CHECK(static_cast<int64_t>(values.size()) == shapeNumel(shape),
               "Tensor::fromVector: ", values.size(), " values do not fill shape ",
               shapeToString(shape));
  Tensor tensor = Tensor::empty(shape, DTypeOf<T>::value);
  std::memcpy(tensor.rawData(), values.data(), values.size() * sizeof(T));
  return tensor;
}
}  // namespace

Tensor Tensor::fromVector(const std::vector<float>& values, const Shape& shape) {
  return fromHostValues(values, shape);
}
Tensor Tensor::fromVector(const std::vector<int64_t>& values, const Shape& shape) {
  return fromHostValues(values, shape);
}
Tensor Tensor::fromVector(const std::vector<int32_t>& values, const Shape& shape) {
  return fromHostValues(values, shape);
}

int64_t Tensor::dim(int index) const {
  const int rank = ndim();
  IMERGE_CHECK(index >= -rank && index < rank, "Tensor::dim: dimension ", index,
               " is out of range for ", describe());
  return shape_[index < 0 ? index + rank : index];
}

Device& Tensor::device() const {
  IMERGE_CHECK(defined(), "Tensor::device: tensor is undefined");
  return storage_->device();
}

void* Tensor::rawData() const {
  IMERGE_CHECK(defined(), "Tensor: accessing the data of an undefined tensor");
  return static_cast<char*>(storage_->data()) + offset_ * static_cast<int64_t>(dtypeSize(dtype_));
}

void Tensor::checkDType(DType wanted) const {
  IMERGE_CHECK(dtype_ == wanted, "Tensor: asked for ", dtypeName(wanted), " data of ", describe());
}

Tensor Tensor::reshape(const Shape& shape) const {
  Shape resolved = shape;
  int inferred = -1;
  int64_t known = 1;
  for (size_t i = 0; i < resolved.size(); ++i) {
    if (resolved[i] == -1) {
      IMERGE_CHECK(inferred < 0, "Tensor::reshape: more than one -1 in ", shapeToString(shape));
      inferred = static_cast<int>(i);
    } else {
      IMERGE_CHECK(resolved[i] >= 0, "Tensor::reshape: negative size in ", shapeToString(shape));
      known *= resolved[i];
    }
  }
  if (inferred >= 0) {
    IMERGE_CHECK(known > 0 && numel_ % known == 0, "Tensor::reshape: cannot reshape ", describe(),
                 " to ", shapeToString(shape));
    resolved[inferred] = numel_ / known;
  }
  IMERGE_CHECK(shapeNumel(resolved) == numel_, "Tensor::reshape: cannot reshape ", describe(),
               " to ", shapeToString(shape), " (element counts differ)");
  Tensor view = *this;
  view.shape_ = std::move(resolved);
  return view;
}

Tensor Tensor::flatView(int64_t elementOffset, const Shape& shape) const {
  const int64_t count = shapeNumel(shape);
  IMERGE_CHECK(elementOffset >= 0 && elementOffset + count <= numel_,
               "Tensor::flatView: ", shapeToString(shape), " at offset ", elementOffset,
               " does not fit in ", describe());
  Tensor view = *this;
  view.offset_ = offset_ + elementOffset;
  view.shape_ = shape;
  view.numel_ = count;
  return view;
}

Tensor Tensor::clone() const {
  if (!defined()) return Tensor();
  Tensor copy = empty(shape_, dtype_, device());
  copy.copyFrom(*this);
  return copy;
}

Tensor Tensor::to(Device& target) const {
  IMERGE_CHECK(defined(), "Tensor::to: tensor is undefined");
  if (&device() == &target) return *this;
  Tensor copy = empty(shape_, dtype_, target);
  copy.copyFrom(*this);
  return copy;
}

void Tensor::copyFrom(const Tensor& source) {
  IMERGE_CHECK(source.shape_ == shape_ && source.dtype_ == dtype_, "Tensor::copyFrom: source ",
               source.describe(), " does not match destination ", describe());
  Device& from = source.device();
  Device& into = device();
  if (&from == &into) {
    into.copyBytes(rawData(), source.rawData(), bytes());
  } else if (from.type() == DeviceType::CPU) {
    into.copyBytesFromHost(rawData(), source.rawData(), bytes());
  } else if (into.type() == DeviceType::CPU) {
    from.copyBytesToHost(rawData(), source.rawData(), bytes());
  } else {
    IMERGE_FAIL("Tensor::copyFrom: copies between two GPUs (", from.name(), " to ", into.name(),
                ") are not implemented; copy through the host with to(cpuDevice())");
  }
}

void Tensor::fill(float value) {
  if (device().type() == DeviceType::CUDA) {
    IMERGE_CHECK(dtype_ == DType::Float32 || value == 0.0f, "Tensor::fill: ", describe(), " on ",
                 device().name(), ": only float32 tensors (or zero) can be filled on a GPU");
    if (dtype_ == DType::Float32) {
      device().backend().fill(*this, value);
    } else {
      zero();
    }
    return;
  }
  switch (dtype_) {
    case DType::Float32:
      std::fill_n(data<float>(), numel_, value);
      break;
    case DType::Int32:
      std::fill_n(data<int32_t>(), numel_, static_cast<int32_t>(value));
      break;
    case DType::Int64:
      std::fill_n(data<int64_t>(), numel_, static_cast<int64_t>(value));
      break;
  }
}

void Tensor::zero() {
  if (numel_) device().setBytesToZero(rawData(), bytes());
}

std::vector<float> Tensor::toVector() const {
  const float* values = data<float>();
  if (device().type() == DeviceType::CPU) return std::vector<float>(values, values + numel_);
  std::vector<float> host(static_cast<size_t>(numel_));
  device().copyBytesToHost(host.data(), values, bytes());
  return host;
}

float Tensor::item() const {
  IMERGE_CHECK(numel_ == 1, "Tensor::item: ", describe(), " has ", numel_, " elements, not 1");
  const float* value = data<float>();
  if (device().type() == DeviceType::CPU) return *value;
  float host = 0;
  device().copyBytesToHost(&host, value, sizeof host);
  return host;
}

std::string Tensor::describe() const {
  if (!defined()) return "undefined tensor";
  return std::string(dtypeName(dtype_)) + shapeToString(shape_);
}

}  // namespace imerge
