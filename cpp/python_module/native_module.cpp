// jax_threshold._native: the Python face of the aclnn executor (used by jax_threshold.aclnn),
// and the XLA FFI handler capsules (used by jax_threshold.ffi).
//
// Tensors cross as plain descriptors built in Python — (data address, shape, element strides,
// aclDataType code) or None for a null pointer — so any NumPy dtype (bfloat16 from ml_dtypes,
// float8, ...) gets through to phase one, which accepts or rejects it by its aclDataType. The
// executor object keeps the arrays alive for as long as it may still run (PyExecutor).
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "aclnn/executor.h"
#include "aclnn/host_stream.h"
#include "ascend_kernels/dtype_soc_table.h"
#include "ascend_kernels/float64_bits.h"
#include "common/op_host/elementwise_tiling.h"
#include "jax_threshold/aclnn_threshold_backward.h"

#ifdef JAX_THRESHOLD_HAS_FFI_HANDLER
#include "xla/ffi/api/c_api.h"
#include "xla_ffi/ffi_handler.h"
#endif

namespace nb = nanobind;
using namespace jax_threshold::aclnn;

namespace {

// Owns an aclOpExecutor for Python, and the arrays its runs read and write (grad_output, x, out).
// No run reads or writes memory Python has freed, whatever the order of calls and threads:
// - the arrays stay referenced for as long as the executor may still run (ExecutorMayRunAgain:
//   not destroyed, and repeatable or not yet run), and each run holds its own references until
//   it returns;
// - a rebinding takes its array in the same step (under the GIL) and is refused while a run is
//   in flight, as the C API refuses it;
// - Destroy() waits for the runs in flight, which hold their own reference to this object.
// The members change only with the GIL held; runs_ is guarded by mu_ as well, for a destroy
// waiting without the GIL.
class PyExecutor {
 public:
  static constexpr size_t kOut = 2;  // arrays_: grad_output, x, out

  PyExecutor(aclOpExecutor* executor, std::array<nb::object, 3> arrays)
      : executor_(executor), plan_(LivePlan(executor)), arrays_(std::move(arrays)) {}
  ~PyExecutor() {
    if (!destroyed_) aclDestroyAclOpExecutor(executor_);  // no run holds this object any more
  }
  PyExecutor(const PyExecutor&) = delete;
  PyExecutor& operator=(const PyExecutor&) = delete;
  // After Destroy(): an address that is never a live executor (not the released one, which a
  // later executor may reuse), so the C API answers with its error code.
  aclOpExecutor* get() const {
    return destroyed_ ? reinterpret_cast<aclOpExecutor*>(const_cast<PyExecutor*>(this)) : executor_;
  }
  // The plan, for the read-only properties; a destroyed executor has none to show.
  const ExecutorPlan* plan() const {
    if (destroyed_) throw nb::value_error("the executor has been destroyed");
    return plan_.get();
  }

  // Phase two, synchronous, without the GIL.
  aclnnStatus Run(void* workspace, uint64_t workspace_size) {
    const std::array<nb::object, 3> held = arrays_;  // released after the run, with the GIL
    aclOpExecutor* executor = get();
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++runs_;
    }
    aclnnStatus status;
    {
      nb::gil_scoped_release release;  // kernels run on this thread and std::threads
      status = aclnnThresholdBackward(workspace, workspace_size, executor, nullptr);
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (--runs_ == 0) runs_ended_.notify_all();
    }
    if (!destroyed_ && !ExecutorMayRunAgain(*plan_)) DropArrays();  // never runs again
    return status;
  }

  aclnnStatus SetTensorAddr(bool output, size_t index, aclTensor* tensor, nb::object array) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (runs_ > 0) {
        return Fail(ACLNN_ERR_PARAM_INVALID,
                    std::string(output ? "aclSetOutputTensorAddr" : "aclSetInputTensorAddr") +
                        ": a run of this executor is still in flight");
      }
    }
    void* addr = tensor == nullptr ? nullptr : tensor->data;
    const aclnnStatus status = output ? aclSetOutputTensorAddr(get(), index, tensor, addr)
                                      : aclSetInputTensorAddr(get(), index, tensor, addr);
    // Success means a slot of this plan: out, or input 0 or 1 (a scalar-threshold plan).
    if (status == ACLNN_SUCCESS && !arrays_[kOut].is_none()) {
      arrays_[output ? kOut : index] = std::move(array);
    }
    return status;
  }

  aclnnStatus Destroy() {
    if (destroyed_) return aclDestroyAclOpExecutor(get());  // PARAM_INVALID: not live
    destroyed_ = true;  // later calls reach only get()'s dead address
    aclnnStatus status;
    {
      nb::gil_scoped_release release;
      std::unique_lock<std::mutex> lock(mu_);
      runs_ended_.wait(lock, [this] { return runs_ == 0; });
      lock.unlock();
      status = aclDestroyAclOpExecutor(executor_);
    }
    DropArrays();
    return status;
  }

 private:
  void DropArrays() { arrays_ = {nb::none(), nb::none(), nb::none()}; }

  aclOpExecutor* executor_;
  std::shared_ptr<ExecutorPlan> plan_;
  std::array<nb::object, 3> arrays_;
  bool destroyed_ = false;
  std::mutex mu_;
  std::condition_variable runs_ended_;
  int runs_ = 0;
};

struct TensorDeleter {
  void operator()(aclTensor* t) const { aclDestroyTensor(t); }
};
using TensorPtr = std::unique_ptr<aclTensor, TensorDeleter>;

// (address, shape, strides in elements, dtype code) or None -> aclTensor (or null).
TensorPtr ToTensor(nb::handle desc, const char* name) {
  if (desc.is_none()) return nullptr;
  auto [address, shape, strides, dtype] =
      nb::cast<std::tuple<uintptr_t, std::vector<int64_t>, std::vector<int64_t>, int32_t>>(desc);
  if (strides.size() != shape.size()) {
    throw nb::value_error((std::string(name) + ": strides and shape differ in length").c_str());
  }
  aclTensor* t = aclCreateTensor(shape.data(), shape.size(), static_cast<aclDataType>(dtype),
                                 strides.data(), 0, reinterpret_cast<void*>(address));
  if (t == nullptr) throw nb::value_error((std::string(name) + ": invalid shape").c_str());
  return TensorPtr(t);
}

// The dtype and SoC table (ascend_kernels/dtype_soc_table.h) as Python values.
void AddTables(nb::module_& m) {
  nb::dict dtypes, kernel_dtypes, threshold_dtypes, integer_ranges;
  for (const ascend_kernels::DtypeRow& row : ascend_kernels::kDtypes) {
    const auto code = static_cast<int32_t>(row.dtype);
    dtypes[row.name] = nb::make_tuple(code, DtypeSize(code));
    if (row.ub_divisor == 0) continue;
    kernel_dtypes[row.name] = code;
    if (ascend_kernels::IntegerRange r{0, 0}; ascend_kernels::DtypeIntegerRange(code, &r)) {
      integer_ranges[row.name] = nb::make_tuple(r.min, r.max);
    }
    // The threshold dtypes x takes: its own first, then float32, float64.
    nb::list names;
    std::vector<int32_t> listed;
    for (int32_t t : {code, static_cast<int32_t>(ACL_FLOAT), static_cast<int32_t>(ACL_DOUBLE)}) {
      if (!ascend_kernels::TakesThresholdDtype(code, t) ||
          std::count(listed.begin(), listed.end(), t) != 0) {
        continue;
      }
      listed.push_back(t);
      names.append(DtypeName(t));
    }
    threshold_dtypes[row.name] = nb::tuple(names);
  }
  // Per SoC: its code, UB bytes per core (0: the host, unbounded), the core count the tiling
  // assumes by default, and phase one's dtypes at any threshold and at threshold 0.
  nb::dict socs, soc_ub_size, soc_core_num, soc_dtypes, soc_zero_threshold_dtypes;
  for (const ascend_kernels::SocRow& row : ascend_kernels::kSocs) {
    PlatformInfo platform;
    platform.soc = static_cast<SocVersion>(row.soc);
    socs[row.name] = static_cast<int32_t>(row.soc);
    soc_ub_size[row.name] = row.ub_bytes;
    soc_core_num[row.name] = *WithDefaults(platform).core_num;
    nb::list any, zero;
    for (auto [name, code] : kernel_dtypes) {
      const int32_t dtype = nb::cast<int32_t>(code);
      if (ascend_kernels::SocRunsKernel(row.soc, KernelOp::kThresholdGradV2D, dtype)) {
        any.append(name);
      }
      if (ascend_kernels::SocRunsKernel(row.soc, KernelOp::kReluGrad, dtype)) zero.append(name);
    }
    soc_dtypes[row.name] = nb::tuple(any);
    soc_zero_threshold_dtypes[row.name] = nb::tuple(zero);
  }
  // {numpy name: (aclDataType code, item size)} of every dtype the executor names.
  m.attr("DTYPES") = dtypes;
  // {numpy name: aclDataType code} of the dtypes the kernels have a tiling for.
  m.attr("KERNEL_DTYPES") = kernel_dtypes;
  m.attr("THRESHOLD_DTYPES") = threshold_dtypes;
  // {numpy name: (min, max)} of the integer kernel dtypes.
  m.attr("INTEGER_RANGES") = integer_ranges;
  m.attr("ACL_DT_UNDEFINED") = static_cast<int32_t>(ACL_DT_UNDEFINED);
  m.attr("SOCS") = socs;
  m.attr("SOC_UB_SIZE") = soc_ub_size;
  m.attr("SOC_CORE_NUM") = soc_core_num;
  m.attr("SOC_DTYPES") = soc_dtypes;
  m.attr("SOC_ZERO_THRESHOLD_DTYPES") = soc_zero_threshold_dtypes;
  const PlatformInfo defaults = WithDefaults(PlatformInfo{});
  m.attr("DEFAULT_SOC") =
      ascend_kernels::SocRowOf(static_cast<ascend_kernels::Soc>(defaults.soc)).name;
  m.attr("DEFAULT_UB_SIZE") = *defaults.ub_size;
  m.attr("DEFAULT_CORE_NUM") = *defaults.core_num;
}

nb::dict TilingDict(const ascend_kernels::ElementwiseTiling& t) {
  nb::dict d;
  d["total_num"] = t.total_num;
  d["block_dim"] = t.block_dim;
  d["tiling_key"] = t.tiling_key;
  d["tile_data_num"] = t.tile_data_num;
  d["small_core_data_num"] = t.small_core_data_num;
  d["big_core_data_num"] = t.big_core_data_num;
  d["final_small_tile_num"] = t.final_small_tile_num;
  d["final_big_tile_num"] = t.final_big_tile_num;
  d["small_tail_data_num"] = t.small_tail_data_num;
  d["big_tail_data_num"] = t.big_tail_data_num;
  d["tail_block_num"] = t.tail_block_num;
  return d;
}

// The SoC's defaults for what is not given; phase one validates the result.
PlatformInfo MakePlatform(int32_t soc, std::optional<uint64_t> ub_size,
                          std::optional<uint32_t> core_num) {
  PlatformInfo info;
  info.soc = static_cast<SocVersion>(soc);
  if (!ascend_kernels::HasSocRow(static_cast<ascend_kernels::Soc>(soc))) {
    throw nb::value_error(("unknown SoC code " + std::to_string(soc)).c_str());
  }
  info.ub_size = ub_size;
  info.core_num = core_num;
  return info;
}

nb::dict Tiling(uint64_t n, int32_t dtype, uint64_t ub_size, uint64_t core_num) {
  ascend_kernels::ElementwiseTiling t{};
  std::string error;
  if (!ascend_kernels::ElementwiseTilingFor(n, dtype, ub_size, core_num, &t, &error)) {
    throw nb::value_error(error.c_str());
  }
  return TilingDict(t);
}

}  // namespace

NB_MODULE(_native, m) {
  m.doc() = "jax_threshold native extension: the aclnn executor and the XLA FFI handlers";

  m.attr("ACLNN_SUCCESS") = ACLNN_SUCCESS;
  m.attr("ACLNN_ERR_PARAM_NULLPTR") = ACLNN_ERR_PARAM_NULLPTR;
  m.attr("ACLNN_ERR_PARAM_INVALID") = ACLNN_ERR_PARAM_INVALID;
  m.attr("ACLNN_ERR_INNER_CREATE_EXECUTOR") = ACLNN_ERR_INNER_CREATE_EXECUTOR;
  m.attr("ACLNN_ERR_INNER_NULLPTR") = ACLNN_ERR_INNER_NULLPTR;
  m.attr("ACLNN_ERR_INNER_TILING_ERROR") = ACLNN_ERR_INNER_TILING_ERROR;
  m.attr("ACLNN_ERR_RUNTIME_ERROR") = ACLNN_ERR_RUNTIME_ERROR;
  m.attr("WORKSPACE_ALIGNMENT") = kWorkspaceAlignment;
  m.attr("HOST_CORE_NUM") = *HostPlatformInfo().core_num;
  m.attr("HOST_UB_SIZE") = *HostPlatformInfo().ub_size;
  AddTables(m);

  nb::class_<PyExecutor>(m, "Executor")
      .def_prop_ro("kernel",
                   [](const PyExecutor& e) {
                     e.plan();
                     return std::string(aclnnThresholdBackwardKernelName(e.get()));
                   })
      .def_prop_ro("tiling",
                   [](const PyExecutor& e) -> nb::object {
                     const ExecutorPlan* p = e.plan();
                     if (!p->kernel) return nb::none();
                     return TilingDict(p->tiling());
                   })
      .def_prop_ro("threshold_params",
                   [](const PyExecutor& e) -> nb::object {
                     const ExecutorPlan* p = e.plan();
                     if (p->kernel != KernelOp::kThresholdGradV2D) {
                       return nb::none();
                     }
                     const auto& t = p->threshold_grad_tiling.threshold;
                     nb::dict d;
                     static const char* kModes[] = {"compare", "all_pass", "none_pass"};
                     d["mode"] = kModes[t.mode];
                     d["threshold_f32"] = t.threshold_f32;
                     d["threshold_f64"] = ascend_kernels::Float64FromBits(t.threshold_f64_bits);
                     d["threshold_int"] = t.threshold_int;
                     return d;
                   })
      .def_prop_ro("workspace_size", [](const PyExecutor& e) { return e.plan()->workspace.size; })
      .def_prop_ro(
          "copies",
          [](const PyExecutor& e) {
            const ExecutorPlan* p = e.plan();
            return std::make_tuple(p->grad_copy.has_value(), p->x_copy.has_value(),
                                   p->out_copy.has_value());
          },
          "(grad_output, x, out): which tensors go through a workspace copy")
      .def(
          "set_repeatable", [](PyExecutor& e) { return aclSetAclOpExecutorRepeatable(e.get()); },
          "aclSetAclOpExecutorRepeatable: the executor runs until destroyed.")
      .def(
          "set_tensor_addr",
          [](PyExecutor& e, bool output, size_t index, nb::handle desc, nb::object array) {
            TensorPtr t = ToTensor(desc, output ? "out" : "input");
            return e.SetTensorAddr(output, index, t.get(), std::move(array));
          },
          nb::arg("output"), nb::arg("index"), nb::arg("tensor").none(), nb::arg("array").none(),
          "aclSetInputTensorAddr / aclSetOutputTensorAddr with the tensor (address, shape, "
          "element strides, aclDataType) at its own address; on success the executor holds "
          "`array` (the object owning that memory) instead of the one it replaces. Refused "
          "(ACLNN_ERR_PARAM_INVALID) while a run is in flight.")
      .def("destroy", &PyExecutor::Destroy,
           "aclDestroyAclOpExecutor, after the runs in flight have returned (without the GIL); "
           "the executor is released whatever the status.");

  m.def(
      "threshold_backward_get_workspace_size",
      [](nb::handle grad, nb::handle x, nb::handle threshold, nb::handle out, int32_t soc,
         std::optional<uint64_t> ub_size, std::optional<uint32_t> core_num,
         std::tuple<nb::object, nb::object, nb::object> arrays) {
        TensorPtr g = ToTensor(grad, "grad_output");
        TensorPtr xt = ToTensor(x, "x");
        TensorPtr o = ToTensor(out, "out");
        std::unique_ptr<aclScalar, void (*)(aclScalar*)> thr(
            nullptr, [](aclScalar* s) { aclDestroyScalar(s); });
        if (!threshold.is_none()) {
          auto [value, dtype] = nb::cast<std::tuple<nb::bytes, int32_t>>(threshold);
          const uint64_t size = DtypeSize(static_cast<aclDataType>(dtype));
          if (value.size() < size) throw nb::value_error("threshold: too few bytes for its dtype");
          thr.reset(aclCreateScalar(value.c_str(), static_cast<aclDataType>(dtype)));
        }
        const PlatformInfo info = MakePlatform(soc, ub_size, core_num);
        uint64_t ws = 0;
        aclOpExecutor* executor = nullptr;
        const aclnnStatus status = aclnnThresholdBackwardGetWorkspaceSize(
            g.get(), xt.get(), thr.get(), o.get(), &ws, &executor, &info);
        nb::object py_executor = nb::none();
        if (status == ACLNN_SUCCESS) {
          auto [g_array, x_array, out_array] = std::move(arrays);
          py_executor = nb::cast(new PyExecutor(executor, {std::move(g_array), std::move(x_array),
                                                           std::move(out_array)}),
                                 nb::rv_policy::take_ownership);
        }
        return nb::make_tuple(status, ws, py_executor);
      },
      nb::arg("grad_output").none(), nb::arg("x").none(), nb::arg("threshold").none(),
      nb::arg("out").none(), nb::arg("soc"), nb::arg("ub_size").none() = nb::none(),
      nb::arg("core_num").none() = nb::none(),
      nb::arg("arrays") = std::make_tuple(nb::none(), nb::none(), nb::none()),
      "Phase one. Tensors are (address, shape, element strides, aclDataType) or None; the "
      "threshold is (value bytes, aclDataType) or None. Returns (status, workspace_size, "
      "Executor or None). ub_size / core_num None: the SoC's defaults; phase one validates them. "
      "arrays: the objects owning grad_output's, x's and out's memory, which the executor holds "
      "for as long as it may still run.");

  m.def(
      "threshold_backward",
      [](uintptr_t workspace, uint64_t workspace_size, PyExecutor* executor) {
        void* ws = reinterpret_cast<void*>(workspace);
        if (executor != nullptr) return executor->Run(ws, workspace_size);
        return aclnnThresholdBackward(ws, workspace_size, nullptr, nullptr);
      },
      nb::arg("workspace"), nb::arg("workspace_size"), nb::arg("executor").none(),
      "Phase two, synchronous. workspace is an address (0: null).");

  m.def(
      "recent_error_message", [] { return std::string(aclGetRecentErrMsg()); },
      "Why the last failing call on this thread failed (aclGetRecentErrMsg).");

  // Both operators tile alike (ascend_kernels/common/op_host/elementwise_tiling.h).
  for (const char* name : {"threshold_grad_v2_d_tiling", "relu_grad_tiling"}) {
    m.def(name, &Tiling, nb::arg("num_elements"), nb::arg("dtype"), nb::arg("ub_size"),
          nb::arg("core_num"));
  }

  // --- XLA FFI handler capsules (ffi_handler.h) ---
  // Registered with XLA by jax_threshold/ffi.py. A list, not a dict: one target name may have a
  // handler per platform ("cpu", and "ASCEND" in NPU builds).
#ifdef JAX_THRESHOLD_HAS_FFI_HANDLER
  m.attr("HAS_FFI_HANDLER") = true;
  // The XLA FFI API the handlers were compiled against (what they report to XLA at registration),
  // and the jaxlib whose headers those were ("" when not known): jax_threshold/ffi.py
  // checks them against the running jaxlib before registering anything.
  m.attr("XLA_FFI_API_VERSION") = nb::make_tuple(XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR);
#ifdef JAX_THRESHOLD_XLA_FFI_JAXLIB_VERSION
  m.attr("XLA_FFI_HEADERS_JAXLIB_VERSION") = JAX_THRESHOLD_XLA_FFI_JAXLIB_VERSION;
#else
  m.attr("XLA_FFI_HEADERS_JAXLIB_VERSION") = "";
#endif
  m.def(
      "ffi_handlers",
      [] {
        nb::list handlers;
        for (const auto& target : jax_threshold::ffi_handler::FfiTargets()) {
          nb::object handler = nb::capsule(reinterpret_cast<void*>(target.handler));
          if (target.instantiate != nullptr) {
            nb::dict stages;
            stages["instantiate"] = nb::capsule(reinterpret_cast<void*>(target.instantiate));
            stages["execute"] = handler;
            handler = stages;
          }
          handlers.append(nb::make_tuple(target.name, target.platform, handler));
        }
        return handlers;
      },
      "[(target name, XLA platform, handler PyCapsule or {stage: PyCapsule})] for "
      "jax.ffi.register_ffi_target.");
  m.def(
      "ffi_types",
      [] {
        nb::dict registration;
        registration["type_id"] = nb::capsule(
            reinterpret_cast<void*>(jax_threshold::ffi_handler::ExecutablePlansTypeId()));
        registration["type_info"] = nb::capsule(const_cast<void*>(
            static_cast<const void*>(jax_threshold::ffi_handler::ExecutablePlansTypeInfo())));
        nb::list types;
        types.append(nb::make_tuple(jax_threshold::ffi_handler::kExecutablePlansTypeName, "cpu",
                                    registration));
        return types;
      },
      "[(type name, XLA platform, registration)] for jax.ffi.register_ffi_type: the handlers' "
      "per-executable state, registered before the targets.");
  m.attr("FFI_TARGET") = jax_threshold::ffi_handler::kLoweringTarget;  // what the lowering emits
#else
  m.attr("HAS_FFI_HANDLER") = false;
#endif
  // --- end of XLA FFI handler capsules ---
}
