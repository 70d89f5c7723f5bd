// Everything needed to build and train a model: modules, initialisers, SGD and schedules.
#pragma once

#include "autograd/autograd.h"
#include "layers/activation.h"
#include "layers/batch_norm.h"
#include "layers/conv2d.h"
#include "layers/init.h"
#include "layers/linear.h"
#include "layers/module.h"
#include "layers/pooling.h"
#include "layers/sequential.h"
