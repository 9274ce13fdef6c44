// Prints one line per SoC row an NPU build can name: its __NPU_ARCH__, the __CCE_AICORE__ of that
// arch (0: none) and its default SOC_VERSION (its list's first). What tools/npu_syntax_check.sh
// and tools/kernel_device_check.sh build for: C++ reads the table, the scripts parse none.
#include <cstdio>

#include "ascend_kernels/dtype_soc_table.h"

int main() {
  using namespace ascend_kernels;
  for (const SocRow& row : kSocs) {
    if (row.soc_versions[0] == '\0') continue;
    uint32_t cce_aicore = 0;
    for (const CceAicoreArch& a : kCceAicoreArchs) {
      if (a.arch == row.arch) cce_aicore = a.cce_aicore;
    }
    int n = 0;
    while (row.soc_versions[n] != '\0' && row.soc_versions[n] != ' ') ++n;
    std::printf("%u %u %.*s\n", row.arch, cce_aicore, n, row.soc_versions);
  }
  return 0;
}
