// Which dtypes each SoC's kernels accept (docs/behaviour.md §2, step 3).
#pragma once

#include <cstdint>
#include <string>

#include "jax_threshold/aclnn_threshold_backward.h"

namespace jax_threshold::aclnn {

// True if `dtype` is in `soc`'s list. The list of Ascend950 depends on the threshold: int64 only
// reaches ReluGrad (threshold exactly 0).
bool SocSupportsDtype(SocVersion soc, aclDataType dtype, bool threshold_is_zero);

// "float32, int32, ..." for error messages.
std::string SocDtypeList(SocVersion soc, bool threshold_is_zero);

const char* SocName(SocVersion soc);

// Why phase one refuses `soc` outright (docs/behaviour.md §2 allows refusing a SoC whose AscendC
// API cannot run the kernels correctly), or null when it does not.
const char* SocRefusalReason(SocVersion soc);

// Whether `soc`'s list depends on the threshold (a dtype only ReluGrad runs there).
bool SocDtypesDependOnThreshold(SocVersion soc);

// Whether `soc` is a row of the SoC table.
bool SocIsKnown(SocVersion soc);

// The platform a caller who names only `soc` plans for: the SoC row's UB and default core count
// (the host's row has neither: HostPlatformInfo, aclnn/host_stream.h, fills them in).
PlatformInfo SocPlatform(SocVersion soc);

// Bytes of unified buffer `soc` has per core (asc-devkit kernel_utils_constants.h
// TOTAL_UB_SIZE); 0 for the host, whose UB is whatever the caller tiles for.
uint64_t SocUbBytes(SocVersion soc);

}  // namespace jax_threshold::aclnn
