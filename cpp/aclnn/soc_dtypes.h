// Which dtypes each SoC's kernels accept (SPEC §2, step 3).
#pragma once

#include <string>

#include "jax_threshold/aclnn_threshold_backward.h"

namespace jax_threshold::aclnn {

// True if `dtype` is in `soc`'s list. The list of Ascend950 depends on the threshold: int64 only
// reaches ReluGrad (threshold exactly 0).
bool SocSupportsDtype(SocVersion soc, aclDataType dtype, bool threshold_is_zero);

// "float32, int32, ..." for error messages.
std::string SocDtypeList(SocVersion soc, bool threshold_is_zero);

const char* SocName(SocVersion soc);

}  // namespace jax_threshold::aclnn
