// The CPU implementation of the AscendC kernel API: kernel sources include "kernel_operator.h"
// exactly as on the NPU and, built with g++ against this directory, run on host threads.
#pragma once

#include "ascendc_types.h"
#include "core_state.h"
#include "data_copy.h"
#include "global_tensor.h"
#include "local_tensor.h"
#include "precondition.h"
#include "tpipe.h"
#include "vector_ops.h"
