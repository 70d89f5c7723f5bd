#include "core/cpu/winograd.h"

#include <algorithm>
#include <cstring>

#include "core/cpu/gemm.h"

namespace imerge::cpu {

namespace {

constexpr int64_t kOutputTile = 4;  // m: each tile yields 4x4 outputs
constexpr int64_t kInputTile = 6;   // m + 3 - 1: from a 6x6 patch of the input
constexpr int64_t kPoints = kInputTile * kInputTile;

// Tiles of U and V (below) kept at once: 16 MiB for both, so that one block's transformed tiles
// stay in the 32 MiB L3 cache between the transform and the matrix products that read them.
constexpr int64_t kBlockBytes = int64_t{16} << 20;

// ---- the 1-D transforms of F(4x4, 3x3), points 0, 1, -1, 2, -2 and infinity ---------------
// Generic lambdas: transform2d inlines them, and they run on one float or on Lanes (below).

// B^T v: an input row or column, 6 -> 6.
constexpr auto inputTransform = [](const auto* v, auto* out) {
  out[0] = 4.0f * v[0] - 5.0f * v[2] + v[4];
  out[1] = -4.0f * v[1] - 4.0f * v[2] + v[3] + v[4];
  out[2] = 4.0f * v[1] - 4.0f * v[2] - v[3] + v[4];
  out[3] = -2.0f * v[1] - v[2] + 2.0f * v[3] + v[4];
  out[4] = 2.0f * v[1] - v[2] - 2.0f * v[3] + v[4];
  out[5] = 4.0f * v[1] - 5.0f * v[3] + v[5];
};

// G v: a kernel row or column, 3 -> 6. Products with the rounded reciprocals rather than the
// slower divisions, since the kernel transforms run at every step (a result moves by at most an
// ulp; no speed-up of the step was measurable).
constexpr float kQuarter = 1.0f / 4.0f, kSixth = 1.0f / 6.0f, kTwelfth = 1.0f / 12.0f,
                kTwentyFourth = 1.0f / 24.0f;
constexpr auto kernelTransform = [](const auto* v, auto* out) {
  out[0] = v[0] * kQuarter;
  out[1] = -(v[0] + v[1] + v[2]) * kSixth;
  out[2] = -(v[0] - v[1] + v[2]) * kSixth;
  out[3] = v[0] * kTwentyFourth + v[1] * kTwelfth + v[2] * kSixth;
  out[4] = v[0] * kTwentyFourth - v[1] * kTwelfth + v[2] * kSixth;
  out[5] = v[2];
};

// A^T v: back from the transformed domain to an output row or column, 6 -> 4.
constexpr auto outputTransform = [](const auto* v, auto* out) {
  out[0] = v[0] + v[1] + v[2] + v[3] + v[4];
  out[1] = v[1] - v[2] + 2.0f * v[3] - 2.0f * v[4];
  out[2] = v[1] + v[2] + 4.0f * v[3] + 4.0f * v[4];
  out[3] = v[1] - v[2] + 8.0f * v[3] - 8.0f * v[4] + v[5];
};

// A v: the output transform's transpose, taking an output gradient's row or column, 4 -> 6.
constexpr auto outputGradientTransform = [](const auto* v, auto* out) {
  out[0] = v[0];
  out[1] = v[0] + v[1] + v[2] + v[3];
  out[2] = v[0] - v[1] + v[2] - v[3];
  out[3] = v[0] + 2.0f * v[1] + 4.0f * v[2] + 8.0f * v[3];
  out[4] = v[0] - 2.0f * v[1] + 4.0f * v[2] - 8.0f * v[3];
  out[5] = v[3];
};

// G^T v: the kernel transform's transpose, back to a kernel gradient's row or column, 6 -> 3.
constexpr auto kernelGradientTransform = [](const auto* v, auto* out) {
  out[0] = v[0] * kQuarter - (v[1] + v[2]) * kSixth + (v[3] + v[4]) * kTwentyFourth;
  out[1] = (v[2] - v[1]) * kSixth + (v[3] - v[4]) * kTwelfth;
  out[2] = (v[3] + v[4] - v[1] - v[2]) * kSixth + v[5];
};

// Eight values side by side (one AVX2 register): the transforms below run on eight tiles or eight
// channels at once, each lane an independent problem. GCC's vector extension, so that the same
// arithmetic reads as it would for one float.
using Lanes = float __attribute__((vector_size(8 * sizeof(float))));
constexpr int64_t kLanes = 8;

// out = T v T^T for the 1-D transform T (In -> Out): T on every column of v, then on every row.
template <int In, int Out, typename Transform1d>
void transform2d(const Lanes (&v)[In][In], Lanes (&out)[Out][Out], Transform1d transform) {
  Lanes columnsDone[Out][In];  // T v
  for (int j = 0; j < In; ++j) {
    Lanes column[In], result[Out];
    for (int i = 0; i < In; ++i) column[i] = v[i][j];
    transform(column, result);
    for (int i = 0; i < Out; ++i) columnsDone[i][j] = result[i];
  }
  for (int i = 0; i < Out; ++i) transform(columnsDone[i], out[i]);
}

// The first `count` lanes from or to consecutive floats; the others are zero on load.
Lanes loadLanes(const float* from, int64_t count) {
  Lanes lanes{};
  if (count == kLanes) {
    std::memcpy(&lanes, from, sizeof lanes);
  } else {
    for (int64_t l = 0; l < count; ++l) lanes[l] = from[l];
  }
  return lanes;
}
void storeLanes(const Lanes& lanes, float* to, int64_t count) {
  if (count == kLanes) {
    std::memcpy(to, &lanes, sizeof lanes);
  } else {
    for (int64_t l = 0; l < count; ++l) to[l] = lanes[l];
  }
}

// A transformed 6x6 tile to or from the [36][rows][columns] layout the matrix products read:
// point p of the tile lies at `at` + p * pointStride.
void storePoints(const Lanes (&points)[kInputTile][kInputTile], float* at, int64_t pointStride,
                 int64_t count) {
  for (int64_t p = 0; p < kPoints; ++p) {
    storeLanes(points[p / kInputTile][p % kInputTile], at + p * pointStride, count);
  }
}
void loadPoints(const float* at, int64_t pointStride, int64_t count,
                Lanes (&points)[kInputTile][kInputTile]) {
  for (int64_t p = 0; p < kPoints; ++p) {
    points[p / kInputTile][p % kInputTile] = loadLanes(at + p * pointStride, count);
  }
}

// body(row, first, lanes) for every row and every group of up to eight consecutive columns of
// 0..columns-1 (first..first+lanes-1), rows and groups shared out among the threads.
template <typename Body>
void forEachLaneGroup(int64_t rows, int64_t columns, Body body) {
  const int64_t groups = (columns + kLanes - 1) / kLanes;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t row = 0; row < rows; ++row) {
    for (int64_t group = 0; group < groups; ++group) {
      const int64_t first = group * kLanes;
      body(row, first, std::min(kLanes, columns - first));
    }
  }
}

// ---- tiles --------------------------------------------------------------------------------

// The 4x4 output tiles of one convolution, numbered image by image, row by row; tile t reads
// the 6x6 input patch whose top-left corner is (4 ty - padding, 4 tx - padding).
struct Tiling {
  int64_t batch, channels, height, width;  // the input [N, C, H, W]
  int64_t padding;
  int64_t outHeight, outWidth;  // H + 2 padding - 2, W + 2 padding - 2
  int64_t tilesHigh, tilesWide, count;

  Tiling(const Shape& input, int64_t pad)
      : batch(input[0]),
        channels(input[1]),
        height(input[2]),
        width(input[3]),
        padding(pad),
        outHeight(input[2] + 2 * pad - 2),
        outWidth(input[3] + 2 * pad - 2),
        tilesHigh((outHeight + kOutputTile - 1) / kOutputTile),
        tilesWide((outWidth + kOutputTile - 1) / kOutputTile),
        count(batch * tilesHigh * tilesWide) {}

  struct Position {
    int64_t image, row, column;  // the tile's image and its top-left output element
  };
  Position position(int64_t tile) const {
    const int64_t perImage = tilesHigh * tilesWide;
    const int64_t within = tile % perImage;
    return {tile / perImage, within / tilesWide * kOutputTile, within % tilesWide * kOutputTile};
  }
};

// How many tiles one block holds when each tile keeps `floatsPerTile` transformed values.
int64_t tilesPerBlock(int64_t floatsPerTile, int64_t count) {
  const int64_t fit = kBlockBytes / (floatsPerTile * static_cast<int64_t>(sizeof(float)));
  return std::clamp<int64_t>(fit, 1, count);
}

// u [36][C][size] = B^T d B for the input patch d of every channel and tile first..first+size-1,
// eight tiles at a time.
void transformInputTiles(const float* x, const Tiling& t, int64_t first, int64_t size, float* u) {
  const int64_t channels = t.channels, planeSize = t.height * t.width;
  forEachLaneGroup(channels, size, [&](int64_t c, int64_t i0, int64_t lanes) {
    Lanes patch[kInputTile][kInputTile] = {};
    for (int64_t l = 0; l < lanes; ++l) {
      const Tiling::Position at = t.position(first + i0 + l);
      const float* plane = x + (at.image * channels + c) * planeSize;
      const int64_t top = at.row - t.padding, left = at.column - t.padding;
      for (int r = 0; r < kInputTile; ++r) {
        const int64_t y = top + r;
        if (y < 0 || y >= t.height) continue;
        const float* row = plane + y * t.width;
        for (int s = 0; s < kInputTile; ++s) {
          const int64_t column = left + s;
          if (column >= 0 && column < t.width) patch[r][s][l] = row[column];
        }
      }
    }
    Lanes transformed[kInputTile][kInputTile];
    transform2d(patch, transformed, inputTransform);
    storePoints(transformed, u + c * size + i0, channels * size, lanes);
  });
}

// z [36][K][size] = A dy A^T for the 4x4 output-gradient tile dy (zero beyond the output's edge)
// of every channel and tile first..first+size-1; dy is [N, K, outHeight, outWidth].
void transformOutputGradientTiles(const float* dy, const Tiling& t, int64_t outChannels,
                                  int64_t first, int64_t size, float* z) {
  const int64_t planeSize = t.outHeight * t.outWidth;
  forEachLaneGroup(outChannels, size, [&](int64_t k, int64_t i0, int64_t lanes) {
    Lanes tile[kOutputTile][kOutputTile] = {};
    for (int64_t l = 0; l < lanes; ++l) {
      const Tiling::Position at = t.position(first + i0 + l);
      const float* plane = dy + (at.image * outChannels + k) * planeSize;
      const int64_t rows = std::min(kOutputTile, t.outHeight - at.row);
      const int64_t columns = std::min(kOutputTile, t.outWidth - at.column);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t s = 0; s < columns; ++s) {
          tile[r][s][l] = plane[(at.row + r) * t.outWidth + at.column + s];
        }
      }
    }
    Lanes transformed[kInputTile][kInputTile];
    transform2d(tile, transformed, outputGradientTransform);
    storePoints(transformed, z + k * size + i0, outChannels * size, lanes);
  });
}

// y [N, K, outHeight, outWidth] (the tiles first..first+size-1) = A^T v A (+ bias) from
// v [36][K][size]; elements of a tile beyond the output's edge are dropped.
void transformOutputTiles(const float* v, const Tiling& t, int64_t outChannels, const float* bias,
                          int64_t first, int64_t size, float* y) {
  const int64_t planeSize = t.outHeight * t.outWidth;
  forEachLaneGroup(outChannels, size, [&](int64_t k, int64_t i0, int64_t lanes) {
    Lanes transformed[kInputTile][kInputTile];
    loadPoints(v + k * size + i0, outChannels * size, lanes, transformed);
    Lanes tile[kOutputTile][kOutputTile];
    transform2d(transformed, tile, outputTransform);
    const float offset = bias ? bias[k] : 0.0f;
    for (int64_t l = 0; l < lanes; ++l) {
      const Tiling::Position at = t.position(first + i0 + l);
      float* plane = y + (at.image * outChannels + k) * planeSize;
      const int64_t rows = std::min(kOutputTile, t.outHeight - at.row);
      const int64_t columns = std::min(kOutputTile, t.outWidth - at.column);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t s = 0; s < columns; ++s) {
          plane[(at.row + r) * t.outWidth + at.column + s] = tile[r][s][l] + offset;
        }
      }
    }
  });
}

// The transformed kernels of a convolution from `inChannels` to `outChannels`:
// transformed [36][outChannels][inChannels] = G g G^T, eight input channels at a time.
// `weight` is [K, C, 3, 3]; the forward convolves C -> K with g = weight[k][c]; the data
// gradient (flipped) convolves K -> C with g = weight[k][c] rotated by 180 degrees.
Tensor transformKernels(const Tensor& weight, bool flipped) {
  const int64_t kernels = weight.dim(0), channels = weight.dim(1);
  const int64_t outChannels = flipped ? channels : kernels;
  const int64_t inChannels = flipped ? kernels : channels;
  Tensor transformed = Tensor::empty({kPoints, outChannels, inChannels});
  const float* w = weight.data<float>();
  float* out = transformed.data<float>();
  forEachLaneGroup(outChannels, inChannels, [&](int64_t o, int64_t i0, int64_t lanes) {
    Lanes kernel[3][3] = {};
    for (int64_t l = 0; l < lanes; ++l) {
      const int64_t k = flipped ? i0 + l : o, c = flipped ? o : i0 + l;
      const float* g = w + (k * channels + c) * 9;
      for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j)
          kernel[i][j][l] = flipped ? g[(2 - i) * 3 + 2 - j] : g[i * 3 + j];
      }
    }
    Lanes v[kInputTile][kInputTile];
    transform2d(kernel, v, kernelTransform);
    storePoints(v, out + o * inChannels + i0, outChannels * inChannels, lanes);
  });
  return transformed;
}

// y [N, K, outHeight, outWidth] = the convolution of x [N, C, H, W] (tiled by t) with the
// transformed kernels [36][K][C], plus bias [K] when not null.
void convolveTiles(const float* x, const Tiling& t, const Tensor& kernels, const float* bias,
                   float* y) {
  const int64_t inChannels = t.channels, outChannels = kernels.dim(1);
  const int64_t block = tilesPerBlock(kPoints * (inChannels + outChannels), t.count);
  Tensor u = Tensor::empty({kPoints * inChannels * block});   // [36][C][block]
  Tensor v = Tensor::empty({kPoints * outChannels * block});  // [36][K][block]
  const float* w = kernels.data<float>();
  for (int64_t first = 0; first < t.count; first += block) {
    const int64_t size = std::min(block, t.count - first);
    transformInputTiles(x, t, first, size, u.data<float>());
    // One product per point, [K, C] x [C, size]; the points share out among the threads, each
    // product running on one (oneDNN's sgemm stays single-threaded inside a parallel region).
#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < kPoints; ++p) {
      sgemm(Transpose::No, Transpose::No, outChannels, size, inChannels, 1.0f,
            w + p * outChannels * inChannels, inChannels, u.data<float>() + p * inChannels * size,
            size, 0.0f, v.data<float>() + p * outChannels * size, size);
    }
    transformOutputTiles(v.data<float>(), t, outChannels, bias, first, size, y);
  }
}

}  // namespace

int64_t winogradTileCount(const Shape& produced) {
  return produced[0] * ((produced[2] + kOutputTile - 1) / kOutputTile) *
         ((produced[3] + kOutputTile - 1) / kOutputTile);
}

size_t winogradBufferBytes(const Shape& weight, const Shape& produced) {
  const int64_t channels = weight[0] + weight[1];
  const int64_t block = tilesPerBlock(kPoints * channels, winogradTileCount(produced));
  const int64_t floats = kPoints * channels * block + kPoints * weight[0] * weight[1];
  return static_cast<size_t>(floats) * sizeof(float);
}

bool winogradApplies(const Shape& weight, const Conv2dParams& params) {
  return weight.size() == 4 && weight[2] == 3 && weight[3] == 3 && params.groups == 1 &&
         params.stride == std::array<int64_t, 2>{1, 1} &&
         params.dilation == std::array<int64_t, 2>{1, 1} &&
         params.padding[0] == params.padding[1] && params.padding[0] <= 2 && params.symmetric();
}

Tensor winogradConv2dForward(const Tensor& input, const Tensor& weight, const Tensor& bias,
                             const Conv2dParams& params, const Shape& outputShape) {
  const Tiling tiling(input.shape(), params.padding[0]);
  Tensor output = Tensor::empty(outputShape);  // [N, K, Ho, Wo]
  convolveTiles(input.data<float>(), tiling, transformKernels(weight, /*flipped=*/false),
                bias.defined() ? bias.data<float>() : nullptr, output.data<float>());
  return output;
}

Tensor winogradConv2dBackwardData(const Tensor& gradOutput, const Tensor& weight,
                                  const Shape& inputShape, const Conv2dParams& params) {
  // A stride-1 convolution's transpose: gradOutput [N, K, Ho, Wo] padded by 2 - padding and
  // convolved with the flipped kernels gives [N, C, Ho + 2 - 2 padding, ...] = [N, C, H, W].
  const Tiling tiling(gradOutput.shape(), 2 - params.padding[0]);
  Tensor gradInput = Tensor::empty(inputShape);  // [N, C, H, W]
  convolveTiles(gradOutput.data<float>(), tiling, transformKernels(weight, /*flipped=*/true),
                nullptr, gradInput.data<float>());
  return gradInput;
}

Tensor winogradConv2dBackwardWeights(const Tensor& input, const Tensor& gradOutput,
                                     const Shape& weightShape, const Conv2dParams& params) {
  const Tiling t(input.shape(), params.padding[0]);
  const int64_t inChannels = t.channels, outChannels = weightShape[0];
  const int64_t block = tilesPerBlock(kPoints * (inChannels + outChannels), t.count);
  Tensor u = Tensor::empty({kPoints * inChannels * block});         // [36][C][block]
  Tensor z = Tensor::empty({kPoints * outChannels * block});        // [36][K][block]
  Tensor sums = Tensor::empty({kPoints, outChannels, inChannels});  // [36][K][C] over tiles
  float* m = sums.data<float>();
  for (int64_t first = 0; first < t.count; first += block) {
    const int64_t size = std::min(block, t.count - first);
    transformInputTiles(input.data<float>(), t, first, size, u.data<float>());
    transformOutputGradientTiles(gradOutput.data<float>(), t, outChannels, first, size,
                                 z.data<float>());
    // Per point, [K, size] x [size, C] summed over the blocks' tiles.
#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < kPoints; ++p) {
      sgemm(Transpose::No, Transpose::Yes, outChannels, inChannels, size, 1.0f,
            z.data<float>() + p * outChannels * size, size, u.data<float>() + p * inChannels * size,
            size, first == 0 ? 0.0f : 1.0f, m + p * outChannels * inChannels, inChannels);
    }
  }
  Tensor gradWeight = Tensor::empty(weightShape);  // [K, C, 3, 3]
  float* dw = gradWeight.data<float>();
  forEachLaneGroup(outChannels, inChannels, [&](int64_t k, int64_t c0, int64_t lanes) {
    Lanes transformed[kInputTile][kInputTile];
    loadPoints(m + k * inChannels + c0, outChannels * inChannels, lanes, transformed);
    Lanes kernel[3][3];
    transform2d(transformed, kernel, kernelGradientTransform);
    for (int64_t l = 0; l < lanes; ++l) {
      float* g = dw + (k * inChannels + c0 + l) * 9;
      for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) g[i * 3 + j] = kernel[i][j][l];
      }
    }
  });
  return gradWeight;
}

}  // namespace imerge::cpu
