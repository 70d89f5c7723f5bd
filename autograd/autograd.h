// The autograd module: variables, the backward engine, no-grad mode and the ops.
#pragma once

#include "autograd/engine.h"
#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "autograd/variable.h"
