// A fake of the XLA FFI C API (xla/ffi/api/c_api.h) for calling the project's handlers as XLA's
// runtime does: errors, the state an instantiate stage sets for the execute stage (deleted with
// the fake), and the stream and device ordinal a call may ask for. Every other API function
// returns an UNIMPLEMENTED error. Misuse that XLA's runtime would not survive aborts with a
// message.
#pragma once

#include <cstdint>
#include <iterator>
#include <map>
#include <string>

#include "ascend_kernels/dtype_soc_table.h"
#include "xla/ffi/api/c_api.h"

namespace jax_threshold::fuzz {

// The XLA type of each table dtype XLA has, written out here rather than taken from the handler
// so that the tests check the handler's. The dtypes the lowering emits come first.
struct XlaDtype {
  XLA_FFI_DataType xla;
  ascend_kernels::Dtype dtype;
};
inline constexpr XlaDtype kXlaDtypes[] = {
    {XLA_FFI_DataType_F32, ascend_kernels::Dtype::kFloat32},
    {XLA_FFI_DataType_F16, ascend_kernels::Dtype::kFloat16},
    {XLA_FFI_DataType_BF16, ascend_kernels::Dtype::kBFloat16},
    {XLA_FFI_DataType_F64, ascend_kernels::Dtype::kFloat64},
    {XLA_FFI_DataType_S8, ascend_kernels::Dtype::kInt8},
    {XLA_FFI_DataType_U8, ascend_kernels::Dtype::kUInt8},
    {XLA_FFI_DataType_S32, ascend_kernels::Dtype::kInt32},
    {XLA_FFI_DataType_S64, ascend_kernels::Dtype::kInt64},
    {XLA_FFI_DataType_S16, ascend_kernels::Dtype::kInt16},
    {XLA_FFI_DataType_U16, ascend_kernels::Dtype::kUInt16},
    {XLA_FFI_DataType_U32, ascend_kernels::Dtype::kUInt32},
    {XLA_FFI_DataType_U64, ascend_kernels::Dtype::kUInt64},
    {XLA_FFI_DataType_PRED, ascend_kernels::Dtype::kBool},
    {XLA_FFI_DataType_C64, ascend_kernels::Dtype::kComplex64},
    {XLA_FFI_DataType_C128, ascend_kernels::Dtype::kComplex128},
};
static_assert(std::size(kXlaDtypes) == ascend_kernels::kDtypeCount,
              "a dtype row without its XLA type here");

// The table dtype code of XLA type `d`; -1 for a type no row has.
constexpr int32_t TableDtypeOf(XLA_FFI_DataType d) {
  for (const XlaDtype& p : kXlaDtypes) {
    if (p.xla == d) return static_cast<int32_t>(p.dtype);
  }
  return -1;
}
constexpr XLA_FFI_DataType XlaDtypeOf(int32_t code) {
  for (const XlaDtype& p : kXlaDtypes) {
    if (static_cast<int32_t>(p.dtype) == code) return p.xla;
  }
  return XLA_FFI_DataType_INVALID;
}

struct FakeOptions {
  void* stream = nullptr;       // what Stream_Get gives; null: Stream_Get is unimplemented
  int32_t device_ordinal = -1;  // what DeviceOrdinal_Get gives; negative: it is unimplemented
};

// What a handler's call ended with.
struct CallOutcome {
  XLA_FFI_Error_Code code = XLA_FFI_Error_Code_OK;
  std::string message;
};

class FakeXlaFfiApi {
 public:
  explicit FakeXlaFfiApi(const FakeOptions& options = {});
  ~FakeXlaFfiApi();
  FakeXlaFfiApi(const FakeXlaFfiApi&) = delete;
  FakeXlaFfiApi& operator=(const FakeXlaFfiApi&) = delete;

  const XLA_FFI_Api* api() const { return &api_; }
  XLA_FFI_ExecutionContext* ctx() { return ctx_; }

  // The outcome of a handler call that returned `error` (null: success); takes ownership of it.
  static CallOutcome Outcome(XLA_FFI_Error* error);

  // A state type, as XLA registers it: the fake deletes a state of this type with `deleter`.
  void RegisterType(int64_t type_id, void (*deleter)(void*));

 private:
  XLA_FFI_Api api_{};
  XLA_FFI_ExecutionContext* ctx_;
  FakeOptions options_;
  std::map<int64_t, void (*)(void*)> types_;

  friend XLA_FFI_Error* FakeStreamGet(XLA_FFI_Stream_Get_Args* args);
  friend XLA_FFI_Error* FakeDeviceOrdinalGet(XLA_FFI_DeviceOrdinal_Get_Args* args);
};

}  // namespace jax_threshold::fuzz
