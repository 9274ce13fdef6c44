// What CANN knows of each arch's SoCs, as data for the test of the SoC rows against it
// (soc_rows_test.cpp). Values read from CANN's sources:
//  - soc_versions: the SOC_VERSIONs asc-devkit's CMake accepts for the arch, compared without case
//    (github.com/mirror-cann/asc-devkit, commit 82b89a15, cmake/asc/legacy_modules/
//    host_config.cmake: the list of each BUILD_MODE; any other value stops with FATAL_ERROR).
//    BUILD_MODE to __NPU_ARCH__: c100 1001, m200 2002, c220 2201, m300 3002, c310 3510
//    (tests/api/basic_api/CMakeLists.txt there). The kirin and MC62 lists (l300, l311, m510) are
//    left out: no source there names their __NPU_ARCH__.
//  - device_names: the SoC names the runtime gives (rtGetSocVersion, which aclrtGetSocName
//    returns) for the arch (github.com/hicann/runtime, commit 681ef761,
//    src/platform/platform_config/{cann,cann-dev}/*.ini: each file's SoC_version and NpuArch).
#pragma once

#include <cstdint>

namespace cann {

struct ArchSocs {
  uint32_t arch;
  const char* soc_versions;
  const char* device_names;
};

inline constexpr ArchSocs kArchSocs[] = {
    {1001, "ascend910a ascend910proa ascend910b ascend910prob ascend910premiuma",
     "Ascend910A Ascend910B Ascend910PremiumA Ascend910ProA Ascend910ProB"},
    {2002,
     "ascend310p1 ascend310p3 ascend310p5 ascend310p7 ascend310p3vir01 ascend310p3vir02 "
     "ascend310p3vir04 ascend310p3vir08",
     "Ascend310P1 Ascend310P3 Ascend310P5 Ascend310P7"},
    {2201,
     "ascend910b1 ascend910b2 ascend910b2c ascend910b3 ascend910b4 ascend910b4-1 ascend910_9391 "
     "ascend910_9381 ascend910_9372 ascend910_9392 ascend910_9382 ascend910_9362",
     "Ascend910B1 Ascend910B2 Ascend910B2C Ascend910B3 Ascend910B4-1 Ascend910B4 Ascend910_9362 "
     "Ascend910_9363 Ascend910_9372 Ascend910_9381 Ascend910_9382 Ascend910_9391 Ascend910_9392"},
    {3002, "ascend310b1 ascend310b2 ascend310b3 ascend310b4",
     "Ascend310B1 Ascend310B2 Ascend310B3 Ascend310B4"},
    {3004, "", "Ascend031"},
    {3505, "", "Ascend035 Ascend035A Ascend035B"},
    {3510,
     "ascend950pr_9599 ascend950pr_958a ascend950pr_9589 ascend950pr_958b ascend950pr_9579 "
     "ascend950pr_957b ascend950pr_957c ascend950pr_957d ascend950pr_950z ascend950dt_950x "
     "ascend950dt_950y ascend950dt_95a1 ascend950dt_95a2 ascend950dt_9591 ascend950dt_9592 "
     "ascend950dt_9595 ascend950dt_9596 ascend950dt_9581 ascend950dt_9582 ascend950dt_9583 "
     "ascend950dt_9584 ascend950dt_9585 ascend950dt_9586 ascend950dt_9587 ascend950dt_9588 "
     "ascend950dt_9571 ascend950dt_9572 ascend950dt_9573 ascend950dt_9574 ascend950dt_9575 "
     "ascend950dt_9576 ascend950dt_9577 ascend950dt_9578 ascend350_354f ascend350_355e",
     "Ascend350_354f Ascend350_355e Ascend950DT_950x Ascend950DT_950y Ascend950DT_9571 "
     "Ascend950DT_9572 Ascend950DT_9573 Ascend950DT_9574 Ascend950DT_9575 Ascend950DT_9576 "
     "Ascend950DT_9577 Ascend950DT_9578 Ascend950DT_9581 Ascend950DT_9581x Ascend950DT_9582 "
     "Ascend950DT_9582x Ascend950DT_9583 Ascend950DT_9584 Ascend950DT_9585 Ascend950DT_9586 "
     "Ascend950DT_9587 Ascend950DT_9588 Ascend950DT_9591 Ascend950DT_9592 Ascend950DT_9595 "
     "Ascend950DT_9596 Ascend950DT_95A1 Ascend950DT_95A2 Ascend950PR_950z Ascend950PR_9579 "
     "Ascend950PR_957b Ascend950PR_957bx Ascend950PR_957c Ascend950PR_957d Ascend950PR_9589 "
     "Ascend950PR_958b Ascend950PR_9599"},
};

}  // namespace cann
