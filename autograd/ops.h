// Every differentiable op, for code that builds models.
#pragma once

#include "autograd/ops/convolution.h"
#include "autograd/ops/elementwise.h"
#include "autograd/ops/linear.h"
#include "autograd/ops/loss.h"
#include "autograd/ops/normalization.h"
#include "autograd/ops/pooling.h"
#include "autograd/ops/softmax.h"
