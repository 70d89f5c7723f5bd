// Inverted dropout on a CUDA device, with the mask contract of core/cpu/dropout.h: float32, 0
// with probability p, else 1/(1-p); the op multiplies by it forward and backward.
//
// The mask is drawn on the device from a counter-based hash of (seed, element index)
// (Philox4x32-10, core/cuda/dropout_hash.h), so it is the same whatever the launch
// configuration, and the seed is one 64-bit draw from the caller's Generator per mask: a run
// with the same seed draws the same masks, and a resumed run continues the generator's stream
// as on the CPU. (cuDNN's dropout keeps its own RNG state, which must be re-initialised to
// re-seed; PyTorch, too, uses its own Philox kernel.) The masks differ from the CPU's, which
// come from the Generator element by element.
#pragma once

#include "core/random.h"
#include "core/tensor.h"

namespace imerge::cuda {

// p in [0, 1]; p = 1 gives a mask of zeros. `device` is the CUDA device of the tensors it will
// multiply.
Tensor dropoutMask(const Shape& shape, float p, Generator& generator, Device& device);

}  // namespace imerge::cuda
