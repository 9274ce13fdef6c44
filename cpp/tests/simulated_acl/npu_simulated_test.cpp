// The NPU host path run end to end against the simulated ACL runtime (SIMULATION: see
// simulated_acl.h and docs/npu.md): the "ASCEND" FFI handler and the executor's NPU phase two
// launch the kernels through the generated-launcher stand-ins, which run them on the CPU AscendC
// model; results are compared bit for bit with the "cpu" handler's on the same operands.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "ascend_kernels/dtype_soc_table.h"
#include "ascend_kernels/kernel_args.h"  // the tiling structs the generated headers name
#include "fuzz/fake_xla_ffi_api.h"
#include "npu_launch.h"
#include "simulated_acl.h"
#include "xla_ffi/ffi_handler.h"

#include "aclrtlaunch_relu_grad.h"

namespace {

using jax_threshold::fuzz::CallOutcome;
using jax_threshold::fuzz::FakeOptions;
using jax_threshold::fuzz::FakeXlaFfiApi;

namespace ak = ascend_kernels;
using jax_threshold::fuzz::XlaDtypeOf;

// The build's SoC row (CMake builds this test once per row an NPU build can name).
const ak::SocRow& kSoc = ak::SocRowOf(ak::kBuildSoc);

// The first (last: false) or the last of a row's device names.
std::string DeviceName(const ak::SocRow& row, bool last) {
  const std::string names = row.device_names;
  const size_t begin = last ? names.rfind(' ') + 1 : 0;  // npos + 1: 0
  return names.substr(begin, last ? std::string::npos : names.find(' '));
}

// Another SoC row that has device names: the build has no kernels for it.
const ak::SocRow& OtherSoc() {
  for (const ak::SocRow& row : ak::kSocs) {
    if (row.soc != ak::kBuildSoc && row.device_names[0] != '\0') return row;
  }
  return kSoc;
}
const std::string kOtherSocName = DeviceName(OtherSoc(), false);

// Devices of the build's SoC: 0 and 1 of 8 fewer vector cores than the row's default and of the
// default; device 2 cannot say its core count. Kernels are checked once per device and process,
// and tests share the process when the binary runs alone: each test that needs a device's first
// use has a device of its own, 3 (of the row's last device name) and 5 to 6; device 4 is of
// another SoC, which the build has no kernels for.
const std::vector<simulated_acl::DeviceSpec> kDevices = {
    {DeviceName(kSoc, false), kSoc.default_cores - 8},
    {DeviceName(kSoc, false), kSoc.default_cores},
    {DeviceName(kSoc, false), 0},
    {DeviceName(kSoc, true), kSoc.default_cores - 8},
    {kOtherSocName, 48},
    {DeviceName(kSoc, false), kSoc.default_cores},
    {DeviceName(kSoc, false), kSoc.default_cores}};
constexpr int kDeadKernelDevice = 3;
constexpr int kOtherSocDevice = 4;
constexpr int kContinueCheckDevice = 5;
constexpr int kStopCheckDevice = 6;

// The handler of target `name` (by default the one the lowering emits) on `platform` (its
// execute stage).
XLA_FFI_Handler* Handler(const char* platform,
                         const char* name = jax_threshold::ffi_handler::kLoweringTarget) {
  for (const auto& t : jax_threshold::ffi_handler::FfiTargets()) {
    if (std::string(t.platform) == platform && std::string(t.name) == name) return t.handler;
  }
  return nullptr;
}

// The instantiate stage that goes with `handler` (null: it has none). XLA runs it once per
// executable before the first execute, and gives the state type an id at registration.
XLA_FFI_Handler* InstantiateStageOf(XLA_FFI_Handler* handler) {
  XLA_FFI_TypeId* id = jax_threshold::ffi_handler::ExecutablePlansTypeId();
  if (id->type_id == 0) id->type_id = 1;
  for (const auto& t : jax_threshold::ffi_handler::FfiTargets()) {
    if (t.handler == handler) return t.instantiate;
  }
  return nullptr;
}

size_t Bytes(XLA_FFI_DataType dtype) {
  return ak::DtypeSize(jax_threshold::fuzz::TableDtypeOf(dtype));
}

// One operand or result: its bytes on the host, and where the call sees them.
struct Operand {
  XLA_FFI_DataType dtype;
  std::vector<int64_t> dims;
  std::vector<unsigned char> host;
  void* data = nullptr;  // host.data() for the CPU handler, a device copy for the NPU one
  size_t ElementCount() const {
    size_t n = 1;
    for (int64_t d : dims) n *= static_cast<size_t>(d);
    return n;
  }
};

Operand Random(XLA_FFI_DataType dtype, std::vector<int64_t> dims, uint32_t seed) {
  Operand o{dtype, std::move(dims), {}, nullptr};
  o.host.resize(o.ElementCount() * Bytes(dtype));
  std::mt19937 rng(seed);
  if (dtype == XLA_FFI_DataType_F32) {
    std::normal_distribution<float> dist(0.f, 2.f);
    for (size_t i = 0; i < o.ElementCount(); ++i) {
      const float v = dist(rng);
      std::memcpy(&o.host[i * 4], &v, 4);
    }
  } else {
    for (auto& b : o.host) b = static_cast<unsigned char>(rng());
  }
  return o;
}

// How a call says which kernel it wants: the lowering's attribute relu_grad (with the threshold
// operand), or the legacy targets' operands ((grad, x, threshold), or (grad, x) for ReluGrad).
enum class Form { kOperand, kReluGrad, kLegacyOperand, kLegacyReluGrad };

// Calls `handler` on (grad, x, threshold) -> out in `form`; the stream and the device ordinal the
// fake API hands out are `stream` and `device` (negative: none).
CallOutcome Call(XLA_FFI_Handler* handler, void* stream, int32_t device, Operand& grad, Operand& x,
                 Operand& threshold, Operand& out, Form form = Form::kOperand) {
  Operand* all[4] = {&grad, &x, &threshold, &out};
  XLA_FFI_Buffer buffers[4];
  for (int i = 0; i < 4; ++i) {
    buffers[i] = {XLA_FFI_Buffer_STRUCT_SIZE,
                  nullptr,
                  all[i]->dtype,
                  all[i]->data,
                  static_cast<int64_t>(all[i]->dims.size()),
                  all[i]->dims.data()};
  }
  XLA_FFI_ArgType arg_types[3] = {XLA_FFI_ArgType_BUFFER, XLA_FFI_ArgType_BUFFER,
                                  XLA_FFI_ArgType_BUFFER};
  void* args[3] = {&buffers[0], &buffers[1], &buffers[2]};
  XLA_FFI_RetType ret_types[1] = {XLA_FFI_RetType_BUFFER};
  void* rets[1] = {&buffers[3]};
  bool flag = form == Form::kReluGrad;
  XLA_FFI_Scalar scalar = {XLA_FFI_DataType_PRED, &flag};
  char name[] = "relu_grad";
  XLA_FFI_ByteSpan name_span = {name, sizeof name - 1};
  XLA_FFI_ByteSpan* attr_names[1] = {&name_span};
  XLA_FFI_AttrType attr_types[1] = {XLA_FFI_AttrType_SCALAR};
  void* attrs[1] = {&scalar};
  FakeOptions options;
  options.stream = stream;
  options.device_ordinal = device;
  FakeXlaFfiApi fake(options);
  XLA_FFI_Handler* instantiate = InstantiateStageOf(handler);
  fake.RegisterType(jax_threshold::ffi_handler::ExecutablePlansTypeId()->type_id,
                    jax_threshold::ffi_handler::ExecutablePlansTypeInfo()->deleter);
  XLA_FFI_CallFrame frame{};
  frame.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
  frame.api = fake.api();
  frame.ctx = fake.ctx();
  const bool legacy = form == Form::kLegacyOperand || form == Form::kLegacyReluGrad;
  frame.attrs = {XLA_FFI_Attrs_STRUCT_SIZE, nullptr, legacy ? 0 : 1, attr_types, attr_names, attrs};
  if (instantiate != nullptr) {  // attributes only, as XLA instantiates an executable's call
    frame.stage = XLA_FFI_ExecutionStage_INSTANTIATE;
    frame.args = {XLA_FFI_Args_STRUCT_SIZE, nullptr, 0, nullptr, nullptr};
    frame.rets = {XLA_FFI_Rets_STRUCT_SIZE, nullptr, 0, nullptr, nullptr};
    const CallOutcome instantiated = FakeXlaFfiApi::Outcome(instantiate(&frame));
    if (instantiated.code != XLA_FFI_Error_Code_OK) return instantiated;
  }
  frame.stage = XLA_FFI_ExecutionStage_EXECUTE;
  frame.args = {XLA_FFI_Args_STRUCT_SIZE, nullptr, form == Form::kLegacyReluGrad ? 2 : 3, arg_types,
                args};
  frame.rets = {XLA_FFI_Rets_STRUCT_SIZE, nullptr, 1, ret_types, rets};
  return FakeXlaFfiApi::Outcome(handler(&frame));
}

// The CPU handler's result for these operands (the CPU AscendC model under the host's rules).
std::vector<unsigned char> OnCpu(Operand grad, Operand x, Operand threshold, Operand out) {
  for (Operand* o : {&grad, &x, &threshold, &out}) o->data = o->host.data();
  const CallOutcome outcome = Call(Handler("cpu"), nullptr, -1, grad, x, threshold, out);
  EXPECT_EQ(outcome.code, XLA_FFI_Error_Code_OK) << outcome.message;
  return out.host;
}

// A device of the simulated runtime, current on the calling thread, with a stream of its own.
class Device {
 public:
  explicit Device(int id) : id_(id) {
    EXPECT_EQ(aclrtSetDevice(id), ACL_SUCCESS);
    EXPECT_EQ(aclrtCreateStream(&stream_), ACL_SUCCESS);
  }
  ~Device() {
    aclrtSetDevice(id_);
    aclrtDestroyStream(stream_);
    for (void* p : owned_) aclrtFree(p);
  }
  int id() const { return id_; }
  aclrtStream stream() const { return stream_; }
  void MakeCurrent() const { ASSERT_EQ(aclrtSetDevice(id_), ACL_SUCCESS); }

  // Gives `o` a device copy of its bytes.
  void Upload(Operand& o) {
    MakeCurrent();
    ASSERT_EQ(aclrtMalloc(&o.data, o.host.size(), ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    owned_.push_back(o.data);
    ASSERT_EQ(
        aclrtMemcpy(o.data, o.host.size(), o.host.data(), o.host.size(), ACL_MEMCPY_HOST_TO_DEVICE),
        ACL_SUCCESS);
  }
  std::vector<unsigned char> Download(const Operand& o) {
    std::vector<unsigned char> host(o.host.size());
    MakeCurrent();
    EXPECT_EQ(aclrtMemcpy(host.data(), host.size(), o.data, host.size(), ACL_MEMCPY_DEVICE_TO_HOST),
              ACL_SUCCESS);
    return host;
  }
  // Calls the ASCEND handler of target `name` on device copies of the operands, without waiting
  // for the stream; `out` is filled with 0x5A first.
  CallOutcome Submit(Operand& grad, Operand& x, Operand& threshold, Operand& out,
                     Form form = Form::kOperand,
                     const char* name = jax_threshold::ffi_handler::kLoweringTarget) {
    for (Operand* o : {&grad, &x, &threshold}) Upload(*o);
    std::fill(out.host.begin(), out.host.end(), 0x5A);
    Upload(out);
    MakeCurrent();
    return Call(Handler("ASCEND", name), stream_, id_, grad, x, threshold, out, form);
  }
  // Submit, then synchronises the stream.
  CallOutcome Run(Operand& grad, Operand& x, Operand& threshold, Operand& out,
                  Form form = Form::kOperand,
                  const char* name = jax_threshold::ffi_handler::kLoweringTarget) {
    CallOutcome outcome = Submit(grad, x, threshold, out, form, name);
    if (outcome.code != XLA_FFI_Error_Code_OK) return outcome;
    if (aclError rc = aclrtSynchronizeStream(stream_); rc != ACL_SUCCESS) {
      outcome.code = XLA_FFI_Error_Code_INTERNAL;
      outcome.message = "the stream failed with ACL error " + std::to_string(rc) + ": " +
                        simulated_acl::LastRunError();
    }
    return outcome;
  }

 private:
  int id_;
  aclrtStream stream_ = nullptr;
  std::vector<void*> owned_;
};

class NpuSimulatedTest : public ::testing::Test {
 protected:
  void SetUp() override { simulated_acl::Reset(kDevices); }
  void TearDown() override { simulated_acl::Reset(kDevices); }
};

struct Case {
  XLA_FFI_DataType dtype;
  std::vector<int64_t> out_dims, threshold_dims;
  XLA_FFI_DataType threshold_dtype;
  std::vector<int64_t> grad_dims = {};  // empty: out's
};

// The operands of `c` and the CPU handler's result for them.
struct Prepared {
  Operand grad, x, threshold, out;
  std::vector<unsigned char> expected;
};
Prepared Prepare(const Case& c, uint32_t seed) {
  Prepared p{Random(c.dtype, c.grad_dims.empty() ? c.out_dims : c.grad_dims, seed),
             Random(c.dtype, c.out_dims, seed + 1),
             Random(c.threshold_dtype, c.threshold_dims, seed + 2),
             Random(c.dtype, c.out_dims, 0),
             {}};
  if (c.threshold_dtype == XLA_FFI_DataType_F32) {  // thresholds among x's values' range
    for (size_t i = 0; i < p.threshold.ElementCount(); ++i) {
      const float t = static_cast<float>(i % 3) - 1.f;  // -1, 0 (ReluGrad's bits), 1
      std::memcpy(&p.threshold.host[i * 4], &t, 4);
    }
  }
  p.expected = OnCpu(p.grad, p.x, p.threshold, p.out);
  return p;
}

const Case kCases[] = {
    {XLA_FFI_DataType_F32, {3, 1000}, {}, XLA_FFI_DataType_F32},
    {XLA_FFI_DataType_F32, {7, 333}, {7, 1}, XLA_FFI_DataType_F32},  // a vmap-batched threshold
    {XLA_FFI_DataType_F32, {64, 1}, {64, 1}, XLA_FFI_DataType_F32},  // slices of one element
    {XLA_FFI_DataType_F16, {5, 4099}, {5, 1}, XLA_FFI_DataType_F32},
    {XLA_FFI_DataType_BF16, {2, 70000}, {}, XLA_FFI_DataType_F32},
    {XLA_FFI_DataType_S32, {4, 100}, {4, 1}, XLA_FFI_DataType_S32},
    {XLA_FFI_DataType_S8, {9, 31}, {9, 1}, XLA_FFI_DataType_S8},
    {XLA_FFI_DataType_U8, {3, 517}, {}, XLA_FFI_DataType_U8},
};

TEST_F(NpuSimulatedTest, AscendHandlerMatchesTheCpuHandlerOnOneDevice) {
  uint32_t seed = 1;
  for (const Case& c : kCases) {
    Prepared p = Prepare(c, seed += 10);
    Device device(0);
    const CallOutcome outcome = device.Run(p.grad, p.x, p.threshold, p.out);
    ASSERT_EQ(outcome.code, XLA_FFI_Error_Code_OK) << outcome.message;
    EXPECT_EQ(device.Download(p.out), p.expected) << "dtype " << c.dtype;
  }
}

// Every dtype row the build's SoC runs a kernel of: ThresholdGradV2D with each threshold dtype it
// reads, ReluGrad with a threshold of 0.
TEST_F(NpuSimulatedTest, EveryDtypeOfTheSocMatchesTheCpuHandler) {
  uint32_t seed = 3000;
  int checked = 0;
  for (const ak::DtypeRow& x : ak::kDtypes) {
    const auto code = static_cast<int32_t>(x.dtype);
    for (const ak::DtypeRow& t : ak::kDtypes) {
      const auto t_code = static_cast<int32_t>(t.dtype);
      if (!ak::TakesThresholdDtype(code, t_code)) continue;
      Prepared p = Prepare({XlaDtypeOf(code), {3, 517}, {3, 1}, XlaDtypeOf(t_code)}, seed += 10);
      Device device(0);
      if (ak::SocRunsKernel(ak::kBuildSoc, ak::KernelOp::kThresholdGradV2D, code)) {
        ASSERT_EQ(device.Run(p.grad, p.x, p.threshold, p.out).code, XLA_FFI_Error_Code_OK);
        EXPECT_EQ(device.Download(p.out), p.expected) << x.name << " x, " << t.name << " threshold";
        ++checked;
      }
      if (ak::SocRunsKernel(ak::kBuildSoc, ak::KernelOp::kReluGrad, code)) {
        std::fill(p.threshold.host.begin(), p.threshold.host.end(), 0);
        p.expected = OnCpu(p.grad, p.x, p.threshold, p.out);
        ASSERT_EQ(device.Run(p.grad, p.x, p.threshold, p.out, Form::kReluGrad).code,
                  XLA_FFI_Error_Code_OK);
        EXPECT_EQ(device.Download(p.out), p.expected) << x.name << " x, ReluGrad";
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 0);
}

// relu_grad=true plans ReluGrad and never reads the threshold operand (all ones here: a NaN
// float32, which would let nothing pass): the bits of a threshold of 0. The legacy names run the
// same handler: the ReluGrad target with two operands, the operand target with the threshold.
TEST_F(NpuSimulatedTest, ReluGradAndTheLegacyTargetsMatchTheCpuHandler) {
  namespace fh = jax_threshold::ffi_handler;
  const Case zero_threshold[] = {
      {XLA_FFI_DataType_F32, {3, 1000}, {}, XLA_FFI_DataType_F32},
      {XLA_FFI_DataType_BF16, {2, 70000}, {}, XLA_FFI_DataType_F32, {1, 70000}},
      {XLA_FFI_DataType_S8, {9, 31}, {}, XLA_FFI_DataType_S8},
  };
  uint32_t seed = 2000;
  for (const Case& c : zero_threshold) {
    Prepared p = Prepare(c, seed += 10);
    std::fill(p.threshold.host.begin(), p.threshold.host.end(), 0);
    p.expected = OnCpu(p.grad, p.x, p.threshold, p.out);
    Device device(0);
    const struct {
      Form form;
      const char* name;
    } calls[] = {{Form::kReluGrad, fh::kLoweringTarget},
                 {Form::kLegacyReluGrad, "jax_threshold_threshold_backward_relu_grad_v1"},
                 {Form::kLegacyOperand, "jax_threshold_threshold_backward_v1"}};
    for (const auto& call : calls) {
      Operand grad = p.grad, x = p.x, threshold = p.threshold, out = p.out;
      if (call.form == Form::kReluGrad)
        std::fill(threshold.host.begin(), threshold.host.end(), 0xff);
      const CallOutcome outcome = device.Run(grad, x, threshold, out, call.form, call.name);
      ASSERT_EQ(outcome.code, XLA_FFI_Error_Code_OK) << call.name << ": " << outcome.message;
      EXPECT_EQ(device.Download(out), p.expected) << call.name << ", dtype " << c.dtype;
    }
  }
}

// The same call on two devices, each with its own stream and memory: nothing one device's call
// leaves behind may be handed to a kernel on the other.
TEST_F(NpuSimulatedTest, TwoDevicesEachGetTheirOwnResults) {
  uint32_t seed = 100;
  for (const Case& c : kCases) {
    Prepared p = Prepare(c, seed += 10);
    for (int id : {0, 1, 0}) {
      Device device(id);
      Operand grad = p.grad, x = p.x, threshold = p.threshold, out = p.out;
      const CallOutcome outcome = device.Run(grad, x, threshold, out);
      ASSERT_EQ(outcome.code, XLA_FFI_Error_Code_OK) << "device " << id << ": " << outcome.message;
      EXPECT_EQ(device.Download(out), p.expected) << "device " << id << ", dtype " << c.dtype;
    }
  }
}

// A batch of thresholds is one launch over all the device's cores, each block finding its slices
// and their thresholds: exact for slices of every size from one element up, of every dtype, with
// a grad_output broadcast along the batch.
TEST_F(NpuSimulatedTest, ABatchIsOneLaunchExactForEverySliceSize) {
  std::vector<Case> cases;
  for (int64_t len : {1, 2, 3, 7, 8, 15, 16, 31, 33, 64, 127, 255, 256, 257, 1000, 4099}) {
    cases.push_back({XLA_FFI_DataType_F32, {37, len}, {37, 1}, XLA_FFI_DataType_F32});
  }
  for (int64_t len : {1, 5, 300}) {
    cases.push_back({XLA_FFI_DataType_F16, {11, len}, {11, 1}, XLA_FFI_DataType_F32});
    cases.push_back({XLA_FFI_DataType_BF16, {11, len}, {11, 1}, XLA_FFI_DataType_F32});
    cases.push_back({XLA_FFI_DataType_S32, {11, len}, {11, 1}, XLA_FFI_DataType_S32});
    cases.push_back({XLA_FFI_DataType_S8, {11, len}, {11, 1}, XLA_FFI_DataType_S8});
    cases.push_back({XLA_FFI_DataType_U8, {11, len}, {11, 1}, XLA_FFI_DataType_U8});
    cases.push_back(
        {XLA_FFI_DataType_F32, {9, len}, {9, 1}, XLA_FFI_DataType_F32, {1, len}});  // grad: 1 row
  }
  cases.push_back({XLA_FFI_DataType_F32, {3, 5, 7}, {3, 5, 1}, XLA_FFI_DataType_F32});
  uint32_t seed = 300;
  for (const Case& c : cases) {
    Prepared p = Prepare(c, seed += 10);
    Device device(1);
    Operand grad = p.grad, x = p.x, threshold = p.threshold, out = p.out;
    ASSERT_EQ(device.Run(grad, x, threshold, out).code, XLA_FFI_Error_Code_OK);  // first uses
    const int64_t before = simulated_acl::GetCounters().launches;
    const CallOutcome outcome = device.Run(grad, x, threshold, out);
    ASSERT_EQ(outcome.code, XLA_FFI_Error_Code_OK) << outcome.message;
    EXPECT_EQ(simulated_acl::GetCounters().launches - before, 1)
        << "dtype " << c.dtype << ", slice of " << c.out_dims.back();
    EXPECT_EQ(device.Download(out), p.expected)
        << "dtype " << c.dtype << ", slice of " << c.out_dims.back();
  }
}

// The handler keeps a plan per call signature and device: later calls of the signature rebind it
// to their buffers (fresh device allocations here) instead of planning again, with exact results;
// another signature gets a plan of its own, and so does another device.
TEST_F(NpuSimulatedTest, PlansAreKeptPerSignatureAndDeviceAndRebound) {
  namespace fh = jax_threshold::ffi_handler;
  const Case a{XLA_FFI_DataType_F32, {13, 777}, {}, XLA_FFI_DataType_F32};
  const Case b{XLA_FFI_DataType_F16, {5, 1, 61}, {5, 1, 1}, XLA_FFI_DataType_F32, {1, 1, 61}};
  const size_t before0 = fh::NpuIdlePlanCount(0), before1 = fh::NpuIdlePlanCount(1);
  uint32_t seed = 1300;
  for (const Case* c : {&a, &a, &a, &b, &b, &a}) {
    Prepared p = Prepare(*c, seed += 10);
    Device device(0);
    const CallOutcome outcome = device.Run(p.grad, p.x, p.threshold, p.out);
    ASSERT_EQ(outcome.code, XLA_FFI_Error_Code_OK) << outcome.message;
    EXPECT_EQ(device.Download(p.out), p.expected) << "dtype " << c->dtype;
  }
  EXPECT_EQ(fh::NpuIdlePlanCount(0), before0 + 2);  // one for a, one for b
  Prepared p = Prepare(a, seed += 10);
  Device device(1);
  ASSERT_EQ(device.Run(p.grad, p.x, p.threshold, p.out).code, XLA_FFI_Error_Code_OK);
  EXPECT_EQ(device.Download(p.out), p.expected);
  EXPECT_EQ(fh::NpuIdlePlanCount(1), before1 + 1);
  EXPECT_EQ(fh::NpuIdlePlanCount(0), before0 + 2);
}

// A broadcast grad_output is read through the kernel's copy-in on the NPU too: one launch, no
// workspace, exact, with a scalar threshold and inside the slices of a batch.
TEST_F(NpuSimulatedTest, BroadcastInputsRunInOneLaunchWithoutAWorkspace) {
  const Case cases[] = {
      {XLA_FFI_DataType_F32, {300, 5}, {}, XLA_FFI_DataType_F32, {1, 5}},
      {XLA_FFI_DataType_F16, {300, 5}, {}, XLA_FFI_DataType_F32, {300, 1}},
      {XLA_FFI_DataType_BF16, {2, 70000}, {}, XLA_FFI_DataType_F32, {1, 70000}},
      {XLA_FFI_DataType_U8, {1000}, {}, XLA_FFI_DataType_U8, {1}},
      {XLA_FFI_DataType_S8, {7, 40, 3}, {7, 1, 1}, XLA_FFI_DataType_S8, {1, 40, 1}},
      {XLA_FFI_DataType_F32, {6, 33, 9}, {6, 1, 1}, XLA_FFI_DataType_F32, {6, 1, 9}},
  };
  uint32_t seed = 900;
  for (const Case& c : cases) {
    Prepared p = Prepare(c, seed += 10);
    Device device(0);
    ASSERT_EQ(device.Run(p.grad, p.x, p.threshold, p.out).code, XLA_FFI_Error_Code_OK);
    const int64_t before = simulated_acl::GetCounters().launches;
    const CallOutcome outcome = device.Run(p.grad, p.x, p.threshold, p.out);
    ASSERT_EQ(outcome.code, XLA_FFI_Error_Code_OK) << outcome.message;
    EXPECT_EQ(simulated_acl::GetCounters().launches - before, 1) << "dtype " << c.dtype;
    EXPECT_EQ(device.Download(p.out), p.expected) << "dtype " << c.dtype;
  }
}

TEST_F(NpuSimulatedTest, ARefusedLaunchIsAnError) {
  Prepared p = Prepare(kCases[0], 7);
  Device device(0);
  simulated_acl::FailLaunches(1, ACL_ERROR_RT_PARAM_INVALID);
  const CallOutcome outcome = device.Run(p.grad, p.x, p.threshold, p.out);
  EXPECT_NE(outcome.code, XLA_FFI_Error_Code_OK);
  EXPECT_NE(outcome.message.find(std::to_string(ACL_ERROR_RT_PARAM_INVALID)), std::string::npos)
      << outcome.message;
}

// A kernel whose handle is dead returns 0 from its launcher without running: the call must fail,
// not leave `out` unwritten behind a success.
TEST_F(NpuSimulatedTest, ADeadKernelIsAnErrorNotASilentSuccess) {
  Prepared p = Prepare(kCases[0], 9);  // a scalar threshold of -1: ThresholdGradV2D float32
  simulated_acl::KillKernel("threshold_grad_v2_d");
  Device device(kDeadKernelDevice);
  const CallOutcome outcome = device.Run(p.grad, p.x, p.threshold, p.out);
  EXPECT_NE(outcome.code, XLA_FFI_Error_Code_OK)
      << "a kernel that never ran reported success; out matches the CPU result: "
      << (device.Download(p.out) == p.expected);
  EXPECT_NE(outcome.message.find("threshold_grad_v2_d"), std::string::npos) << outcome.message;
  EXPECT_NE(outcome.message.find("did not run"), std::string::npos) << outcome.message;
}

// Once its kernels have run on a device, a call allocates nothing there but the generated
// launcher's overflow-status buffer, one per launch, and submits without waiting.
TEST_F(NpuSimulatedTest, ACallAllocatesOnlyTheLaunchersOverflowBuffers) {
  Prepared p = Prepare(kCases[1], 17);  // 7 slices, thresholds -1, 0, 1: both kernels
  Device device(0);
  Operand grad = p.grad, x = p.x, threshold = p.threshold, out = p.out;
  ASSERT_EQ(device.Run(grad, x, threshold, out).code, XLA_FFI_Error_Code_OK);
  for (Operand* o : {&grad, &x, &threshold, &out}) device.Upload(*o);
  const simulated_acl::Counters before = simulated_acl::GetCounters();
  const CallOutcome outcome =
      Call(Handler("ASCEND"), device.stream(), device.id(), grad, x, threshold, out);
  ASSERT_EQ(outcome.code, XLA_FFI_Error_Code_OK) << outcome.message;
  const simulated_acl::Counters after = simulated_acl::GetCounters();
  EXPECT_GT(after.launches, before.launches);
  EXPECT_EQ(after.mallocs - before.mallocs, after.launches - before.launches);
  EXPECT_EQ(after.blocks_run, before.blocks_run);  // queued, not yet run
  ASSERT_EQ(aclrtSynchronizeStream(device.stream()), ACL_SUCCESS);
  EXPECT_EQ(device.Download(out), p.expected);
}

TEST_F(NpuSimulatedTest, AMissingStreamIsAnErrorNamingIt) {
  Prepared p = Prepare(kCases[0], 11);
  Device device(0);
  for (Operand* o : {&p.grad, &p.x, &p.threshold, &p.out}) device.Upload(*o);
  const CallOutcome outcome =
      Call(Handler("ASCEND"), nullptr, device.id(), p.grad, p.x, p.threshold, p.out);
  EXPECT_EQ(outcome.code, XLA_FFI_Error_Code_FAILED_PRECONDITION) << outcome.message;
  EXPECT_NE(outcome.message.find("no aclrtStream"), std::string::npos) << outcome.message;
  EXPECT_NE(outcome.message.find("XLA_FFI_Stream_Get"), std::string::npos) << outcome.message;
  EXPECT_EQ(simulated_acl::GetCounters().launches, 0);
}

TEST_F(NpuSimulatedTest, ACoreCountTheDeviceCannotGiveIsAnError) {
  Prepared p = Prepare(kCases[0], 13);
  Device device(2);
  const CallOutcome outcome = device.Run(p.grad, p.x, p.threshold, p.out);
  EXPECT_NE(outcome.code, XLA_FFI_Error_Code_OK);
  EXPECT_NE(outcome.message.find("ACL_DEVICE_INFO_VECTOR_CORE_NUM"), std::string::npos)
      << outcome.message;
}

// The core count is asked once per device, not per call.
TEST_F(NpuSimulatedTest, TheCoreCountIsAskedOncePerDevice) {
  Prepared p = Prepare(kCases[0], 15);
  for (int id : {0, 1}) {
    Device device(id);
    for (int call = 0; call < 3; ++call) {
      Operand grad = p.grad, x = p.x, threshold = p.threshold, out = p.out;
      ASSERT_EQ(device.Run(grad, x, threshold, out).code, XLA_FFI_Error_Code_OK);
    }
  }
  EXPECT_LE(simulated_acl::GetCounters().device_info, 2);
}

// The call's device is XLA's device ordinal, not whatever device the thread has current: when
// they differ, the call is refused naming both, before anything is planned, allocated or
// launched on either device. With the thread on the call's device, the same call runs.
TEST_F(NpuSimulatedTest, ACallForAnotherDeviceThanTheThreadsIsRefused) {
  namespace fh = jax_threshold::ffi_handler;
  Prepared p = Prepare(kCases[1], 19);  // both kernels
  Device device0(0), device1(1);
  for (Operand* o : {&p.grad, &p.x, &p.threshold, &p.out}) device1.Upload(*o);
  const size_t plans0 = fh::NpuIdlePlanCount(0), plans1 = fh::NpuIdlePlanCount(1);
  device0.MakeCurrent();
  const simulated_acl::Counters before = simulated_acl::GetCounters();
  const CallOutcome outcome =
      Call(Handler("ASCEND"), device1.stream(), 1, p.grad, p.x, p.threshold, p.out);
  EXPECT_EQ(outcome.code, XLA_FFI_Error_Code_FAILED_PRECONDITION) << outcome.message;
  EXPECT_NE(outcome.message.find("for device 1"), std::string::npos) << outcome.message;
  EXPECT_NE(outcome.message.find("current device is 0"), std::string::npos) << outcome.message;
  const simulated_acl::Counters after = simulated_acl::GetCounters();
  EXPECT_EQ(after.launches, before.launches);
  EXPECT_EQ(after.mallocs, before.mallocs);
  EXPECT_EQ(after.device_info, before.device_info);
  EXPECT_EQ(fh::NpuIdlePlanCount(0), plans0);
  EXPECT_EQ(fh::NpuIdlePlanCount(1), plans1);
  EXPECT_EQ(aclrtSynchronizeStream(device1.stream()), ACL_SUCCESS);
  EXPECT_EQ(simulated_acl::GetCounters().blocks_run, before.blocks_run);

  device1.MakeCurrent();
  const CallOutcome on_its_device =
      Call(Handler("ASCEND"), device1.stream(), 1, p.grad, p.x, p.threshold, p.out);
  ASSERT_EQ(on_its_device.code, XLA_FFI_Error_Code_OK) << on_its_device.message;
  ASSERT_EQ(aclrtSynchronizeStream(device1.stream()), ACL_SUCCESS);
  EXPECT_EQ(device1.Download(p.out), p.expected);
}

// As the runtime does, the simulation refuses a launch or an asynchronous copy on a stream of
// another device than the thread's current one (ACL_ERROR_RT_STREAM_CONTEXT), and queues nothing.
TEST_F(NpuSimulatedTest, TheRuntimeRefusesAStreamOfAnotherDevice) {
  Device device1(1);
  void* buffer = nullptr;
  ASSERT_EQ(aclrtMalloc(&buffer, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  Device device0(0);  // current from here on
  unsigned char host[64] = {};
  EXPECT_EQ(aclrtMemcpyAsync(buffer, sizeof host, host, sizeof host, ACL_MEMCPY_HOST_TO_DEVICE,
                             device1.stream()),
            ACL_ERROR_RT_STREAM_CONTEXT);
  ReluGradTilingData tiling{};
  EXPECT_EQ(
      ACLRT_LAUNCH_KERNEL(relu_grad)(1, device1.stream(), buffer, buffer, buffer, nullptr, &tiling),
      static_cast<uint32_t>(ACL_ERROR_RT_STREAM_CONTEXT));
  EXPECT_EQ(simulated_acl::GetCounters().launches, 0);
  device1.MakeCurrent();
  EXPECT_EQ(aclrtSynchronizeStream(device1.stream()), ACL_SUCCESS);
  EXPECT_EQ(aclrtFree(buffer), ACL_SUCCESS);
}

// Destroying a stream is refused from a thread whose current device is another
// (ACL_ERROR_RT_STREAM_CONTEXT) and leaves the stream working; synchronising it is not refused.
TEST_F(NpuSimulatedTest, TheRuntimeRefusesToDestroyAStreamOfAnotherDevice) {
  Prepared p = Prepare(kCases[0], 23);
  Device device1(1);
  ASSERT_EQ(device1.Submit(p.grad, p.x, p.threshold, p.out).code, XLA_FFI_Error_Code_OK);
  Device device0(0);  // current from here on
  EXPECT_EQ(aclrtDestroyStream(device1.stream()), ACL_ERROR_RT_STREAM_CONTEXT);
  EXPECT_EQ(aclrtSynchronizeStream(device1.stream()), ACL_SUCCESS);
  EXPECT_EQ(device1.Download(p.out), p.expected);
  device1.MakeCurrent();
  aclrtStream stream = nullptr;
  ASSERT_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
  EXPECT_EQ(aclrtDestroyStream(stream), ACL_SUCCESS);
}

// One SoC name per process, whichever device is current, as aclrtGetSocName caches it.
TEST_F(NpuSimulatedTest, TheSocNameIsTheProcesssFirstOne) {
  ASSERT_EQ(aclrtSetDevice(kOtherSocDevice), ACL_SUCCESS);
  EXPECT_EQ(aclrtGetSocName(), kOtherSocName);
  ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
  EXPECT_EQ(aclrtGetSocName(), kOtherSocName);
  simulated_acl::Reset(kDevices);  // a fresh process
  ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
  EXPECT_EQ(aclrtGetSocName(), DeviceName(kSoc, false));
  ASSERT_EQ(aclrtSetDevice(kOtherSocDevice), ACL_SUCCESS);
  EXPECT_EQ(aclrtGetSocName(), DeviceName(kSoc, false));
}

// A process whose SoC is not the build's fails every call with that reason, on every device:
// the runtime's one name is all there is to plan with.
TEST_F(NpuSimulatedTest, AProcessOfAnotherSocFailsEveryCallNamingIt) {
  Prepared p = Prepare(kCases[0], 25);
  for (int id : {kOtherSocDevice, 0}) {
    Device device(id);
    const CallOutcome outcome = device.Run(p.grad, p.x, p.threshold, p.out);
    EXPECT_EQ(outcome.code, XLA_FFI_Error_Code_FAILED_PRECONDITION) << outcome.message;
    EXPECT_NE(outcome.message.find(kOtherSocName), std::string::npos) << outcome.message;
    EXPECT_NE(outcome.message.find(std::string(kSoc.name) + " the kernels were built for"),
              std::string::npos)
        << outcome.message;
  }
  EXPECT_EQ(simulated_acl::GetCounters().launches, 0);
}

// On a host that mixes SoCs, a device of another SoC than the process's is planned with the
// process's SoC, and its kernels have no handle there: the call fails naming the kernel and the
// device, never a silent success; the other device's next call is exact.
TEST_F(NpuSimulatedTest, ADeviceOfAnotherSocThanTheProcesssIsAnError) {
  Prepared p = Prepare(kCases[0], 27);
  Device device0(0);
  ASSERT_EQ(device0.Run(p.grad, p.x, p.threshold, p.out).code, XLA_FFI_Error_Code_OK);
  Device other(kOtherSocDevice);
  Operand grad = p.grad, x = p.x, threshold = p.threshold, out = p.out;
  const CallOutcome outcome = other.Run(grad, x, threshold, out);
  EXPECT_NE(outcome.code, XLA_FFI_Error_Code_OK)
      << "out is the CPU result: " << (other.Download(out) == p.expected);
  EXPECT_NE(outcome.message.find("device " + std::to_string(kOtherSocDevice)), std::string::npos)
      << outcome.message;
  EXPECT_NE(outcome.message.find("did not run"), std::string::npos) << outcome.message;
  ASSERT_EQ(device0.Run(p.grad, p.x, p.threshold, p.out).code, XLA_FFI_Error_Code_OK);
  EXPECT_EQ(device0.Download(p.out), p.expected);
}

// ACL_CONTINUE_ON_FAILURE (the default): after a kernel's AI-core exception the stream's later
// tasks run, and the exception is reported by one synchronisation. The call after the failed
// one on the same stream is exact; so is the next call, with the stream clean again.
TEST_F(NpuSimulatedTest, AfterAnExceptionAContinueOnFailureStreamRunsOnAndReportsItOnce) {
  Prepared p = Prepare(kCases[4], 29);  // bfloat16 over many blocks
  Device device(0);
  ASSERT_EQ(device.Run(p.grad, p.x, p.threshold, p.out).code, XLA_FFI_Error_Code_OK);
  Operand grad = p.grad, x = p.x, threshold = p.threshold, out = p.out;
  simulated_acl::RaiseKernelExceptions(1, ACL_ERROR_RT_AICORE_EXCEPTION);
  ASSERT_EQ(device.Submit(p.grad, p.x, p.threshold, p.out).code, XLA_FFI_Error_Code_OK);
  ASSERT_EQ(device.Submit(grad, x, threshold, out).code, XLA_FFI_Error_Code_OK);
  EXPECT_EQ(aclrtSynchronizeStream(device.stream()), ACL_ERROR_RT_AICORE_EXCEPTION);
  EXPECT_NE(device.Download(p.out), p.expected);  // block 0 only
  EXPECT_EQ(device.Download(out), p.expected);
  EXPECT_EQ(aclrtSynchronizeStream(device.stream()), ACL_SUCCESS);
  const CallOutcome next = device.Run(p.grad, p.x, p.threshold, p.out);
  ASSERT_EQ(next.code, XLA_FFI_Error_Code_OK) << next.message;
  EXPECT_EQ(device.Download(p.out), p.expected);
}

// ACL_STOP_ON_FAILURE: the exception aborts the stream. Its later tasks never run and every
// synchronisation reports the exception, so no later call on it passes for a success; its
// device's other streams run their kernels but report it too (the context failed); another
// device is unaffected. A stream in stop mode cannot go back to continuing.
TEST_F(NpuSimulatedTest, AfterAnExceptionAStopOnFailureStreamRunsNothingMoreAndKeepsReportingIt) {
  Prepared p = Prepare(kCases[4], 31);
  Device device(0);
  ASSERT_EQ(aclrtSetStreamFailureMode(device.stream(), ACL_STOP_ON_FAILURE), ACL_SUCCESS);
  ASSERT_EQ(device.Run(p.grad, p.x, p.threshold, p.out).code, XLA_FFI_Error_Code_OK);
  Operand grad = p.grad, x = p.x, threshold = p.threshold, out = p.out;
  simulated_acl::RaiseKernelExceptions(1, ACL_ERROR_RT_VECTOR_CORE_EXCEPTION);
  ASSERT_EQ(device.Submit(p.grad, p.x, p.threshold, p.out).code, XLA_FFI_Error_Code_OK);
  ASSERT_EQ(device.Submit(grad, x, threshold, out).code, XLA_FFI_Error_Code_OK);
  EXPECT_EQ(aclrtSynchronizeStream(device.stream()), ACL_ERROR_RT_VECTOR_CORE_EXCEPTION);
  EXPECT_EQ(device.Download(out), std::vector<unsigned char>(out.host.size(), 0x5A));
  EXPECT_EQ(aclrtSynchronizeStream(device.stream()), ACL_ERROR_RT_VECTOR_CORE_EXCEPTION);
  const CallOutcome next = device.Run(grad, x, threshold, out);
  EXPECT_NE(next.code, XLA_FFI_Error_Code_OK);
  EXPECT_NE(next.message.find(std::to_string(ACL_ERROR_RT_VECTOR_CORE_EXCEPTION)),
            std::string::npos)
      << next.message;
  EXPECT_EQ(aclrtSetStreamFailureMode(device.stream(), ACL_CONTINUE_ON_FAILURE),
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT);

  Device same_device(0);
  Operand grad2 = p.grad, x2 = p.x, threshold2 = p.threshold, out2 = p.out;
  const CallOutcome on_another_stream = same_device.Run(grad2, x2, threshold2, out2);
  EXPECT_NE(on_another_stream.message.find(std::to_string(ACL_ERROR_RT_VECTOR_CORE_EXCEPTION)),
            std::string::npos)
      << on_another_stream.message;
  EXPECT_EQ(same_device.Download(out2), p.expected);

  Device device1(1);
  const CallOutcome elsewhere = device1.Run(p.grad, p.x, p.threshold, p.out);
  ASSERT_EQ(elsewhere.code, XLA_FFI_Error_Code_OK) << elsewhere.message;
  EXPECT_EQ(device1.Download(p.out), p.expected);
}

// An exception in a kernel's first-use check fails the call naming the error and the device. In
// continue mode the check has consumed it: the next call checks again and is exact. In stop mode
// the stream is aborted: every later call on it fails the same way.
TEST_F(NpuSimulatedTest, AnExceptionInTheFirstUseCheckFailsTheCallByTheFailureMode) {
  Prepared p = Prepare(kCases[0], 33);
  for (int id : {kContinueCheckDevice, kStopCheckDevice}) {
    Device device(id);
    if (id == kStopCheckDevice) {
      ASSERT_EQ(aclrtSetStreamFailureMode(device.stream(), ACL_STOP_ON_FAILURE), ACL_SUCCESS);
    }
    simulated_acl::RaiseKernelExceptions(1, ACL_ERROR_RT_AICORE_EXCEPTION);
    Operand grad = p.grad, x = p.x, threshold = p.threshold, out = p.out;
    const CallOutcome failed = device.Run(grad, x, threshold, out);
    EXPECT_NE(failed.code, XLA_FFI_Error_Code_OK);
    for (const std::string& part : {std::to_string(ACL_ERROR_RT_AICORE_EXCEPTION),
                                    "device " + std::to_string(id), std::string("aclrtSync")}) {
      EXPECT_NE(failed.message.find(part), std::string::npos) << failed.message;
    }
    const CallOutcome next = device.Run(grad, x, threshold, out);
    if (id == kContinueCheckDevice) {
      ASSERT_EQ(next.code, XLA_FFI_Error_Code_OK) << next.message;
      EXPECT_EQ(device.Download(out), p.expected);
    } else {
      EXPECT_NE(next.code, XLA_FFI_Error_Code_OK);
      EXPECT_NE(next.message.find(std::to_string(ACL_ERROR_RT_AICORE_EXCEPTION)), std::string::npos)
          << next.message;
    }
  }
}

// A dtype whose kernel the build's SoC does not run is refused by the
// launcher, ACL_ERROR_FEATURE_UNSUPPORTED, and never launched.
TEST_F(NpuSimulatedTest, TheLauncherRefusesADtypeTheBuildsSocHasNoKernelFor) {
  Device device(0);
  void* buffer = nullptr;
  ASSERT_EQ(aclrtMalloc(&buffer, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  using ascend_kernels::KernelOp;
  int refused = 0;
  for (const ascend_kernels::DtypeRow& row : ascend_kernels::kDtypes) {
    const auto dtype = static_cast<int32_t>(row.dtype);
    for (KernelOp op : {KernelOp::kThresholdGradV2D, KernelOp::kReluGrad}) {
      if (ascend_kernels::SocRunsKernel(ascend_kernels::kBuildSoc, op, dtype)) continue;
      ThresholdGradV2DTilingData threshold_grad{};
      ReluGradTilingData relu_grad{};
      threshold_grad.dtype = relu_grad.dtype = dtype;
      const aclError rc =
          op == KernelOp::kReluGrad
              ? ascend_kernels::LaunchReluGradOnNpu(1, device.stream(), buffer, buffer, buffer,
                                                    nullptr, relu_grad)
              : ascend_kernels::LaunchThresholdGradV2DOnNpu(
                    1, device.stream(), buffer, buffer, nullptr, buffer, nullptr, threshold_grad);
      EXPECT_EQ(rc, ACL_ERROR_FEATURE_UNSUPPORTED) << row.name;
      ++refused;
    }
  }
  EXPECT_GT(refused, 0);  // float64 at least: no SoC runs it
  EXPECT_EQ(simulated_acl::GetCounters().launches, 0);
  EXPECT_EQ(aclrtFree(buffer), ACL_SUCCESS);
}

// Device memory is not host memory: outside a kernel run or an ACL copy, a host read of a device
// pointer faults, as on hardware (the same bytes read through aclrtMemcpy).
using NpuSimulatedDeathTest = NpuSimulatedTest;

unsigned char HostRead(const void* p) { return *static_cast<const volatile unsigned char*>(p); }

TEST_F(NpuSimulatedDeathTest, AHostReadOfDeviceMemoryFaults) {
  Prepared p = Prepare(kCases[0], 21);
  Device device(0);
  ASSERT_EQ(device.Run(p.grad, p.x, p.threshold, p.out).code, XLA_FFI_Error_Code_OK);
  EXPECT_EQ(device.Download(p.out), p.expected);
  EXPECT_DEATH(HostRead(p.x.data), "");    // an operand written by aclrtMemcpy
  EXPECT_DEATH(HostRead(p.out.data), "");  // a kernel's result
}

// Device addresses are never host-accessible, also while a kernel runs: a read from another
// thread during a kernel run faults.
TEST_F(NpuSimulatedDeathTest, AHostReadOfDeviceMemoryFaultsWhileAKernelRuns) {
  Prepared p = Prepare(kCases[0], 35);
  Device device(0);
  ASSERT_EQ(device.Run(p.grad, p.x, p.threshold, p.out).code, XLA_FFI_Error_Code_OK);
  const void* x = p.x.data;  // an operand of the first call, still allocated
  simulated_acl::WhileKernelsRun([x] { std::thread([x] { HostRead(x); }).join(); });
  Operand grad = p.grad, threshold = p.threshold, out = p.out;
  EXPECT_DEATH(
      {
        ASSERT_EQ(device.Submit(grad, p.x, threshold, out).code, XLA_FFI_Error_Code_OK);
        aclrtSynchronizeStream(device.stream());
      },
      "");
  simulated_acl::WhileKernelsRun(nullptr);
}

}  // namespace
