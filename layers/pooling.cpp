#include "layers/pooling.h"

namespace imerge::layers {

namespace {
autograd::Pool2dOptions squarePool(const char* layer, int64_t kernel, int64_t stride,
                                   int64_t padding, bool ceilMode, bool countIncludePad) {
  IMERGE_CHECK(kernel > 0 && stride >= 0 && padding >= 0, layer, ": kernel ", kernel, ", stride ",
               stride, " and padding ", padding, " must be positive (stride 0: the kernel size)");
  IMERGE_CHECK(2 * padding <= kernel, layer, ": padding ", padding,
               " must be at most half the kernel ", kernel);
  if (stride == 0) stride = kernel;
  return {{kernel, kernel}, {stride, stride}, {padding, padding}, ceilMode, countIncludePad};
}

std::string describePool(const char* layer, const autograd::Pool2dOptions& o) {
  return detail::concat(layer, "(kernel=", o.kernel[0], ", stride=", o.stride[0],
                        ", padding=", o.padding[0], o.ceilMode ? ", ceil_mode" : "", ")");
}
}  // namespace

MaxPool2d::MaxPool2d(int64_t kernel, int64_t stride, int64_t padding, bool ceilMode)
    : options_(squarePool("MaxPool2d", kernel, stride, padding, ceilMode, true)) {}

std::string MaxPool2d::describe() const {
  return describePool("MaxPool2d", options_);
}

AvgPool2d::AvgPool2d(int64_t kernel, int64_t stride, int64_t padding, bool ceilMode,
                     bool countIncludePad)
    : options_(squarePool("AvgPool2d", kernel, stride, padding, ceilMode, countIncludePad)) {}

std::string AvgPool2d::describe() const {
  return describePool("AvgPool2d", options_);
}

}  // namespace imerge::layers
