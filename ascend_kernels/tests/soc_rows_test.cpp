// The SoC rows (dtype_soc_table.h) against what CANN and the CPU model know of their arches, and
// the check that the sweeps claiming every row ran each of them.
#include <cctype>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include "cann_socs.h"
#include "kernel_fixture.h"
#include "kernel_operator.h"

namespace {

using kt::Soc;

std::vector<std::string> Words(const char* text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// What `row` names that CANN does not know for the row's arch: a SOC_VERSION its CMake does not
// accept there, or a device-name prefix that matches no name the runtime gives for the arch, or
// one of another arch (a SoC the row would then plan for). "" when there is none.
std::string UnknownToCann(const ascend_kernels::SocRow& row) {
  const cann::ArchSocs* own = nullptr;
  for (const cann::ArchSocs& a : cann::kArchSocs) {
    if (a.arch == row.arch) own = &a;
  }
  for (const std::string& v : Words(row.soc_versions)) {
    bool known = false;
    for (const std::string& c : Words(own != nullptr ? own->soc_versions : "")) {
      known = known || Lower(v) == c;
    }
    if (!known) return "SOC_VERSION " + v;
  }
  for (const std::string& prefix : Words(row.device_names)) {
    bool matched = false;
    for (const cann::ArchSocs& a : cann::kArchSocs) {
      for (const std::string& name : Words(a.device_names)) {
        if (Lower(name).compare(0, prefix.size(), Lower(prefix)) != 0) continue;
        if (a.arch != row.arch)
          return "device name " + prefix + " (" + name + " is another arch's)";
        matched = true;
      }
    }
    if (!matched) return "device name " + prefix;
  }
  return "";
}

TEST(SocRows, EverySocVersionAndDeviceNameIsOneCannKnowsForTheRowsArch) {
  for (const ascend_kernels::SocRow& row : ascend_kernels::kSocs) {
    EXPECT_EQ(UnknownToCann(row), "") << row.name;
  }
  // The check refuses what CANN does not know: "Ascend950" is no SOC_VERSION, "Ascend910" prefixes
  // dav_c100 devices too.
  EXPECT_NE(
      UnknownToCann(ascend_kernels::SocRow(Soc::kAscend950).Arch(3510).SocVersions("Ascend950")),
      "");
  EXPECT_NE(
      UnknownToCann(ascend_kernels::SocRow(Soc::kAscend910B).Arch(2201).DeviceNames("Ascend910")),
      "");
  EXPECT_EQ(UnknownToCann(ascend_kernels::SocRow(Soc::kAscend910B)
                              .Arch(2201)
                              .SocVersions("ascend910b4-1")
                              .DeviceNames("Ascend910_93")),
            "");
}

// Every device name and SOC_VERSION of a row names that row, and the NPU build's refusal of
// another SOC_VERSION lists them.
TEST(SocRows, EveryDeviceNameAndSocVersionNamesItsRow) {
  const std::string listed = " " ASCEND_KERNELS_SOC_VERSIONS " ";
  for (const ascend_kernels::SocRow& row : ascend_kernels::kSocs) {
    std::istringstream words(row.soc_versions);
    for (std::string v; words >> v;) {
      EXPECT_TRUE(ascend_kernels::IsSocVersion(v.c_str())) << v;
      EXPECT_EQ(ascend_kernels::SocOfSocVersion(v.c_str()), row.soc) << v;
      EXPECT_NE(listed.find(" " + v + " "), std::string::npos) << v;
    }
  }
  for (const ascend_kernels::SocRow& row : ascend_kernels::kSocs) {  // device names: prefixes
    std::istringstream words(row.device_names);
    for (std::string name; words >> name;) {
      const ascend_kernels::SocRow* found = ascend_kernels::SocOfDeviceName((name + "x").c_str());
      EXPECT_TRUE(found != nullptr && found->soc == row.soc) << name;
    }
  }
  EXPECT_TRUE(ascend_kernels::SocOfDeviceName("Ascend910B") == nullptr);  // dav_c100
  EXPECT_FALSE(ascend_kernels::IsSocVersion("Ascend910A"));               // dav_c100: refused
  EXPECT_FALSE(ascend_kernels::IsSocVersion("Ascend910B"));               // ditto, despite the name
  EXPECT_TRUE(ascend_kernels::IsSocVersion("ascend910b4-1"));  // without case, as CANN's CMake
  EXPECT_FALSE(ascend_kernels::IsSocVersion("Ascend910B41"));  // whole words only
}

// Each SoC row's UB is its arch's TOTAL_UB_SIZE in the model (0 for the host on both sides).
TEST(SocRows, EverySocRowsUbIsItsArchsTotalUbSize) {
  for (const ascend_kernels::SocRow& row : ascend_kernels::kSocs) {
    const cpu_ascendc::ArchRules* rules = cpu_ascendc::FindRules(row.arch);
    ASSERT_TRUE(rules != nullptr) << row.name;
    EXPECT_EQ(row.ub_bytes, rules->total_ub_size) << row.name;
  }
}

// EveryRowRan, which the sweeps claiming every row end with, fails for a log that misses a row,
// or that ran it on another platform than its own.
TEST(SocRows, ASweepLogMissingARowFailsTheClaim) {
  using ascend_kernels::KernelOp;
  const int32_t float32 = static_cast<int32_t>(ascend_kernels::Dtype::kFloat32);
  std::vector<kt::Launched> log;
  for (const ascend_kernels::SocRow& row : ascend_kernels::kSocs) {
    if (!ascend_kernels::SocRunsKernel(row.soc, KernelOp::kReluGrad, float32)) continue;
    const kt::Platform platform = kt::PlatformOf(row.soc);
    log.push_back({row.soc, KernelOp::kReluGrad, float32, platform.ub, platform.cores});
  }
  ASSERT_GE(log.size(), 2u);
  EXPECT_EQ(kt::EveryRowRan(log, KernelOp::kReluGrad, float32, true), "");
  EXPECT_NE(kt::EveryRowRan(log, KernelOp::kThresholdGradV2D, float32, false), "");
  std::vector<kt::Launched> other_cores = log;
  other_cores.back().block_dim += 1;
  EXPECT_EQ(kt::EveryRowRan(other_cores, KernelOp::kReluGrad, float32, false), "");
  EXPECT_NE(kt::EveryRowRan(other_cores, KernelOp::kReluGrad, float32, true), "");
  log.pop_back();
  EXPECT_NE(kt::EveryRowRan(log, KernelOp::kReluGrad, float32, false), "");
}

}  // namespace
