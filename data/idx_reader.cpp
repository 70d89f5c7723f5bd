#include "data/idx_reader.h"
