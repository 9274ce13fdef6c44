"""The aclnn-style two-phase executor of threshold_backward, from Python (docs/behaviour.md §2).

    from jax_threshold import aclnn
    status, workspace_size, executor = aclnn.threshold_backward_get_workspace_size(
        grad_output, x, threshold, out, soc="Ascend910B")
    if status == aclnn.ACLNN_SUCCESS:
      workspace = np.empty(workspace_size, np.uint8)
      status = aclnn.threshold_backward(workspace, workspace_size, executor)

Tensors are NumPy arrays of any strides (bfloat16 from ml_dtypes too) or None for a null
pointer; `out` is written in place and nothing outside its view is touched. Element-unaligned
data is copied byte-wise by the executor; an `out` that partly overlaps an input gives copy
semantics (the input is read first); byte-swapped arrays raise ValueError. Failures come back as
aclnn status codes, exactly as the C API returns them, with the reason in
`recent_error_message()`; the executor is then None. A NumPy dtype phase one does not support is
passed through so phase one rejects it with ACLNN_ERR_PARAM_INVALID (`recent_error_message()`
names it as NumPy does). Everything runs on the host (the project's CPU implementation of the
AscendC primitives); `soc` only chooses the dtype list and the platform defaults of the tiling.
"""

import decimal
import math
import numbers
import re
import threading
from typing import Any, Optional

import numpy as np
import numpy.typing as npt

from jax_threshold import _native  # type: ignore[attr-defined]  # compiled, no stub
from jax_threshold import _dtypes
from jax_threshold import _threshold

ACLNN_SUCCESS = _native.ACLNN_SUCCESS
ACLNN_ERR_PARAM_NULLPTR = _native.ACLNN_ERR_PARAM_NULLPTR
ACLNN_ERR_PARAM_INVALID = _native.ACLNN_ERR_PARAM_INVALID
ACLNN_ERR_INNER_CREATE_EXECUTOR = _native.ACLNN_ERR_INNER_CREATE_EXECUTOR
ACLNN_ERR_INNER_NULLPTR = _native.ACLNN_ERR_INNER_NULLPTR
ACLNN_ERR_INNER_TILING_ERROR = _native.ACLNN_ERR_INNER_TILING_ERROR
ACLNN_ERR_RUNTIME_ERROR = _native.ACLNN_ERR_RUNTIME_ERROR

# SocVersion codes of aclnn_threshold_backward.h, from the native SoC table ("host" is what the
# XLA FFI handler uses on CPU).
SOCS: dict[str, int] = dict(_native.SOCS)
DEFAULT_SOC: str = _native.DEFAULT_SOC

# Each SoC's platform defaults, as phase one takes them: its row's unified buffer and core count.
# The host's row has no unified buffer: it tiles for HOST_CORE_NUM blocks (a few per hardware
# thread, claimed dynamically) and a UB of HOST_UB_SIZE bytes (tiles that stay in L1).
HOST_CORE_NUM = _native.HOST_CORE_NUM
HOST_UB_SIZE = _native.HOST_UB_SIZE
_DEFAULT_UB_SIZES: dict[str, int] = {
  soc: ub or HOST_UB_SIZE for soc, ub in _native.SOC_UB_SIZE.items()
}
_DEFAULT_CORE_NUMS: dict[str, int] = dict(_native.SOC_CORE_NUM)
DEFAULT_UB_SIZE: int = _DEFAULT_UB_SIZES[DEFAULT_SOC]
DEFAULT_CORE_NUM: int = _DEFAULT_CORE_NUMS[DEFAULT_SOC]

# aclDataType codes by NumPy dtype name, from the native dtype table; a dtype missing here is
# ACL_DT_UNDEFINED.
_ACL_DTYPES: dict[str, int] = {name: code for name, (code, _) in _native.DTYPES.items()}
ACL_DT_UNDEFINED: int = _native.ACL_DT_UNDEFINED

# The dtypes the kernels have a tiling for.
_TILING_DTYPES = frozenset(_native.KERNEL_DTYPES.values())


def acl_dtype(dtype: npt.DTypeLike) -> int:
  """The aclDataType code of a NumPy dtype (ACL_DT_UNDEFINED if it has none).

  Matched by name and item size, so ml_dtypes' bfloat16 works without NumPy knowing it.
  """
  dtype = np.dtype(dtype)
  if dtype.fields is not None:  # a structured dtype
    return ACL_DT_UNDEFINED
  return _ACL_DTYPES.get(dtype.name, ACL_DT_UNDEFINED)


def _tensor(array, name: str, writable: bool = False):
  """np.ndarray -> (address, shape, element strides, aclDataType), or None for None.

  Only native byte order reaches the executor: a byte-swapped array would be read as if it were
  native, so it is refused (ValueError) rather than silently misread. Element-unaligned data is
  passed on: phase one plans a byte-wise copy for it.
  """
  if array is None:
    return None
  if not isinstance(array, np.ndarray):
    raise TypeError(f"{name} must be a numpy.ndarray or None, got {type(array).__name__}")
  if writable and not array.flags.writeable:
    raise ValueError(f"{name} is read-only; the executor writes its result into it")
  if not array.dtype.isnative:
    raise ValueError(
      f"{name} has dtype {array.dtype.str}, not in the host's byte order; "
      f"convert it with .astype({name}.dtype.newbyteorder('='))"
    )
  itemsize = array.dtype.itemsize
  if itemsize == 0 or any(s % itemsize for s in array.strides):
    raise ValueError(
      f"{name} has strides {array.strides} that are not multiples of its "
      f"item size {itemsize} (dtype {array.dtype})"
    )
  address = array.__array_interface__["data"][0]
  strides = tuple(s // itemsize for s in array.strides)
  return (address, tuple(array.shape), strides, acl_dtype(array.dtype))


# x's aclDataType -> how its threshold is handed over, from the Python contract's dtypes.
_NARROW_FLOAT_CODES = frozenset(_ACL_DTYPES[d.name] for d in _dtypes.NARROW_FLOAT_DTYPES)
_INTEGER_DTYPES = {
  _ACL_DTYPES[d.name]: d for d in _dtypes.SUPPORTED_DTYPES if _dtypes.is_integer(d)
}
_F32, _F64, _I64 = (_ACL_DTYPES[name] for name in ("float32", "float64", "int64"))
_SCALAR_TYPES: dict[int, type[np.float32 | np.float64 | np.int64]] = {
  _F32: np.float32,
  _F64: np.float64,
  _I64: np.int64,
}
# The smallest positive float64: its float32 rounding is 0, yet it is not 0 (see _scalar).
_TINY = math.ldexp(1.0, -1074)


def _as_numpy_scalar(threshold):
  """A 0-d array-like of another library (a JAX array, jnp.float32(0.5), ...) as a NumPy array,
  as the JAX API takes it; Python numbers, NumPy values, Decimals and strings stay as they are."""
  if isinstance(threshold, (numbers.Number, np.generic, np.ndarray, decimal.Decimal, str, bytes)):
    return threshold
  if any(hasattr(threshold, a) for a in ("__array__", "__array_interface__", "__array_struct__")):
    return np.asarray(threshold)
  return threshold


def _scalar(threshold, x_code: int):
  """The threshold -> (value bytes, aclDataType) that gives the executor exactly the comparison
  of docs/behaviour.md §1 for x of aclDataType `x_code`, or None for None.

  The executor uses the value unchanged: for float16 / bfloat16 / float32 x the exact threshold
  rounded once to float32, for float64 x (and a dtype phase one refuses) to float64, for integer
  x its floor, or -inf / +inf below / above the dtype's range (_threshold's functions). Whether
  the threshold is exactly 0 (the ReluGrad kernel, Ascend950's int64) is the given value's: a
  nonzero one whose conversion is 0 is passed as a nonzero value of the same comparison (0.5 for
  integer x, else the smallest float64 of its sign, which rounds to the same float32 0). A
  complex threshold is passed on as complex128, which phase one refuses; bools and other
  non-real values raise TypeError.
  """
  if threshold is None:
    return None
  threshold = _as_numpy_scalar(threshold)
  if isinstance(threshold, np.ndarray) and threshold.shape != ():
    raise ValueError(f"threshold must be a scalar, got an array of shape {threshold.shape}")
  item = threshold[()] if isinstance(threshold, np.ndarray) else threshold
  if isinstance(item, (complex, np.complexfloating)):
    return (np.complex128(item).tobytes(), _ACL_DTYPES["complex128"])
  value = _threshold.exact_value(threshold)
  if x_code in _INTEGER_DTYPES:
    info = np.iinfo(_INTEGER_DTYPES[x_code])
    k = _threshold.clamped_floor(value, info.dtype)
    if not info.min <= k <= info.max:
      return _scalar_bytes(math.copysign(math.inf, k), _F64)
    return _scalar_bytes(0.5, _F64) if k == 0 and value != 0 else _scalar_bytes(k, _I64)
  code = _F32 if x_code in _NARROW_FLOAT_CODES else _F64
  rounded = _threshold.round_to(value, _SCALAR_TYPES[code])
  if rounded == 0 and value != 0 and x_code != _F64:
    return _scalar_bytes(math.copysign(_TINY, rounded), _F64)
  return _scalar_bytes(rounded, code)


def _scalar_bytes(value, code: int):
  return (_SCALAR_TYPES[code](value).tobytes(), code)


def _platform_int(value, name: str, bits: int):
  """ub_size / core_num: None (the SoC's default) or an int the executor's field can hold;
  phase one decides whether it is acceptable (ACLNN_ERR_PARAM_INVALID otherwise)."""
  if value is None:
    return None
  if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
    raise TypeError(f"{name} must be an int or None, got {type(value).__name__}")
  value = int(value)
  if not 0 <= value < (1 << bits):
    raise ValueError(f"{name} must be in [0, 2^{bits}), got {value}")
  return value


class Executor:
  """The plan phase one made.

  It holds the arrays it reads and writes for as long as it may still run (until its one run,
  or until `destroy()` once repeatable), and every run holds them until it returns; so no order of
  calls or threads makes a run read or write memory Python has freed.
  """

  def __init__(self, native):
    self._native = native

  def set_repeatable(self) -> int:
    """aclSetAclOpExecutorRepeatable: the executor runs any number of times until `destroy()`.

    As in CANN, an executor is made repeatable before its first run (right after phase one).

    Returns the aclnn status: ACLNN_ERR_PARAM_INVALID once it has run (or while its one run is in
    flight) or once destroyed.
    """
    return self._native.set_repeatable()

  def set_input_tensor_addr(self, index: int, array: np.ndarray) -> int:
    """aclSetInputTensorAddr: input `index` (0 grad_output, 1 x) reads `array` from now on.

    `array` must have the planned dtype, shape and strides, and an address aligned like the
    planned one; the plan is unchanged, and the executor holds `array` instead of the one it
    replaces. Returns the aclnn status (ACLNN_ERR_PARAM_INVALID for another index, size, layout
    or alignment, a run in flight, or a destroyed executor).
    """
    return self._rebind(False, index, array)

  def set_output_tensor_addr(self, index: int, array: np.ndarray) -> int:
    """aclSetOutputTensorAddr: the result (index 0) goes into the writable `array` from now on."""
    return self._rebind(True, index, array)

  def destroy(self) -> int:
    """aclDestroyAclOpExecutor. Waits for runs in flight on other threads to return (the GIL is
    released meanwhile), then releases the executor and its arrays. ACLNN_SUCCESS for a
    repeatable executor; as CANN's, an error code for one that is not (it is released all the
    same) or one already destroyed."""
    return self._native.destroy()

  def _rebind(self, output: bool, index: int, array) -> int:
    if isinstance(index, (bool, np.bool_)) or not isinstance(index, numbers.Integral):
      raise TypeError(f"index must be an int, got {type(index).__name__}")
    if not 0 <= int(index) < (1 << 63):
      raise ValueError(f"index must be in [0, 2^63), got {index}")
    name = "out" if output else ("grad_output", "x")[int(index)] if int(index) < 2 else "input"
    desc = _tensor(array, name, writable=output)
    # On success the executor holds `array` in place of the one it replaces.
    return self._native.set_tensor_addr(output, int(index), desc, array)

  @property
  def kernel(self) -> str:
    """ "ThresholdGradV2D", "ReluGrad", or "" when nothing runs (empty tensors)."""
    return self._native.kernel

  @property
  def tiling(self) -> Optional[dict]:
    """The kernel's ElementwiseTiling as a dict (None when nothing runs)."""
    return self._native.tiling

  @property
  def threshold_params(self) -> Optional[dict]:
    """ThresholdGradV2D's ThresholdParams (None for ReluGrad / nothing to run)."""
    return self._native.threshold_params

  @property
  def workspace_size(self) -> int:
    return self._native.workspace_size

  @property
  def copies(self) -> tuple:
    """(grad_output, x, out): which of them go through a contiguous copy in the workspace."""
    return self._native.copies

  def __repr__(self):
    return (
      f"aclnn.Executor(kernel={self.kernel!r}, workspace_size={self.workspace_size}, "
      f"copies={self.copies})"
    )


def _soc_code(soc: str) -> int:
  try:
    return SOCS[soc]
  except KeyError:
    raise ValueError(f"unknown soc {soc!r}; expected one of {', '.join(SOCS)}") from None


# The executor names a dtype without an aclDataType "undefined"; this thread's last such failure,
# with the NumPy names put in, for recent_error_message().
_unnamed_dtypes = threading.local()


def _name_undefined_dtypes(tensors) -> None:
  message = _native.recent_error_message()
  named = message
  for name, array in tensors.items():
    if array is not None and acl_dtype(array.dtype) == ACL_DT_UNDEFINED:
      dtype_name: str = array.dtype.name
      named = re.sub(
        rf"\b{name} (has )?dtype undefined\b",
        lambda m: m.group(0).replace("undefined", dtype_name),  # noqa: B023 (used at once)
        named,
      )
  if named != message:
    _unnamed_dtypes.message = (message, named)


def threshold_backward_get_workspace_size(
  grad_output: Optional[np.ndarray],
  x: Optional[np.ndarray],
  threshold: Any,
  out: Optional[np.ndarray],
  *,
  soc: str = DEFAULT_SOC,
  core_num: Optional[int] = None,
  ub_size: Optional[int] = None,
) -> tuple[int, int, Optional[Executor]]:
  """Phase one (aclnnThresholdBackwardGetWorkspaceSize): validate, plan, size the workspace.

  Args:
    grad_output, x: NumPy arrays of any strides (ml_dtypes.bfloat16 too), or None for a null
      pointer. They broadcast against each other.
    threshold: any real number (docs/behaviour.md §1): a Python number, a NumPy scalar, or
      any 0-d array-like of a real dtype (a 0-d NumPy or JAX array, `jnp.float32(0.5)`, taken
      with `np.asarray`); or None for a null pointer.
    out: a writable NumPy array of the broadcast shape and x's dtype, or None; the result is
      written into it by phase two (in place on an input is allowed).
    soc: a name of `SOCS` (`DEFAULT_SOC` by default); phase one refuses a SoC whose AscendC
      API cannot run the kernels.
    core_num, ub_size: the platform; None for the SoC's own (as `threshold_grad_v2_d_tiling`).

  Returns:
    (status, workspace_size, executor): status is an aclnn code (ACLNN_SUCCESS = 0); on success
    an `Executor` to pass to `threshold_backward`, else None with the reason in
    `recent_error_message()`.

  Raises:
    TypeError: a non-array tensor, a bool or non-real threshold, a non-int platform value.
    ValueError: an unknown soc, a read-only `out`, a byte-swapped array, strides that are not
      whole elements, a platform value outside its C type.

  Example:
    >>> status, size, executor = threshold_backward_get_workspace_size(g, x, 1.0, out)
    >>> status == ACLNN_SUCCESS, executor.kernel
    (True, 'ThresholdGradV2D')

  Phase one refuses a platform it cannot run with (ACLNN_ERR_PARAM_INVALID): ub_size must be a
  multiple of 32 in [16 KiB, 1 MiB] and within the SoC's unified buffer, core_num in [1, 4096].
  """
  code = _soc_code(soc)
  ub_size = _platform_int(ub_size, "ub_size", 64)
  core_num = _platform_int(core_num, "core_num", 32)
  g_desc, x_desc = _tensor(grad_output, "grad_output"), _tensor(x, "x")
  out_desc = _tensor(out, "out", writable=True)
  x_code = x_desc[3] if x_desc is not None else ACL_DT_UNDEFINED
  status, workspace_size, native = _native.threshold_backward_get_workspace_size(
    g_desc,
    x_desc,
    _scalar(threshold, x_code),
    out_desc,
    soc=code,
    ub_size=ub_size,
    core_num=core_num,
    arrays=(grad_output, x, out),
  )
  if native is None:
    _name_undefined_dtypes({"grad_output": grad_output, "x": x, "out": out})
    return status, workspace_size, None
  return status, workspace_size, Executor(native)


def threshold_backward(
  workspace: Optional[np.ndarray], workspace_size: int, executor: Optional[Executor]
) -> int:
  """Phase two (aclnnThresholdBackward): runs the executor, once; the result is in `out`.

  Args:
    workspace: a writable C-contiguous uint8 array of at least `workspace_size` bytes, or None
      when phase one asked for 0.
    workspace_size: the size phase one returned.
    executor: the `Executor` phase one returned (None is reported as a status).

  Returns:
    The aclnn status: ACLNN_SUCCESS, ACLNN_ERR_PARAM_NULLPTR (null executor or workspace),
    ACLNN_ERR_PARAM_INVALID (already run and not repeatable, destroyed, workspace too small).
    The GIL is released while the kernels run; the run holds the executor's arrays until it
    returns.

  Raises:
    TypeError: a workspace that is not a uint8 array.
    ValueError: a read-only or non-contiguous workspace, or one smaller than `workspace_size`.

  Example:
    >>> workspace = np.empty(size, np.uint8) if size else None
    >>> threshold_backward(workspace, size, executor) == ACLNN_SUCCESS
    True
  """
  if workspace is None:
    address = 0
  else:
    if not isinstance(workspace, np.ndarray) or workspace.dtype != np.uint8:
      raise TypeError("workspace must be a numpy uint8 array or None")
    if not workspace.flags.c_contiguous or not workspace.flags.writeable:
      raise ValueError("workspace must be a writable C-contiguous array")
    if workspace.nbytes < workspace_size:
      raise ValueError(
        f"workspace holds {workspace.nbytes} bytes, less than the "
        f"workspace_size {workspace_size} passed with it"
      )
    address = workspace.__array_interface__["data"][0]
  native = None if executor is None else executor._native
  return _native.threshold_backward(address, workspace_size, native)


def recent_error_message() -> str:
  """Why the last failing call on this thread failed (aclGetRecentErrMsg).

  Returns:
    The message of this thread's last failing call ("" when none failed).

  Example:
    >>> threshold_backward_get_workspace_size(g, x, 1.0, None)[0] == ACLNN_ERR_PARAM_NULLPTR
    True
    >>> recent_error_message()
    'out is null'
  """
  message = _native.recent_error_message()
  renamed = getattr(_unnamed_dtypes, "message", None)
  if renamed is not None and renamed[0] == message:
    return renamed[1]  # a NumPy dtype the executor knows only as "undefined", named
  return message


def _tiling(fn, num_elements, dtype, ub_size, core_num, soc) -> dict:
  _soc_code(soc)
  code = acl_dtype(dtype)
  if num_elements < 0:
    raise ValueError(f"num_elements must be >= 0, got {num_elements}")
  if code not in _TILING_DTYPES:
    raise ValueError(f"no tiling for dtype {np.dtype(dtype).name}")
  ub_size = _DEFAULT_UB_SIZES[soc] if ub_size is None else ub_size
  core_num = _DEFAULT_CORE_NUMS[soc] if core_num is None else core_num
  return fn(num_elements, code, ub_size, core_num)


def threshold_grad_v2_d_tiling(
  num_elements: int,
  dtype: npt.DTypeLike,
  ub_size: Optional[int] = None,
  core_num: Optional[int] = None,
  *,
  soc: str = DEFAULT_SOC,
) -> dict:
  """ThresholdGradV2D's tiling (docs/behaviour.md §3).

  Args:
    num_elements: the element count (>= 0). dtype: a NumPy dtype with a tiling.
    ub_size, core_num: the platform; None for the SoC's own, as phase one plans.
    soc: a name of `SOCS` (`DEFAULT_SOC` by default).

  Returns:
    A dict of ElementwiseTiling's fields (block_dim, tile_data_num, small_core_data_num, ...).

  Raises:
    ValueError: a negative count, a dtype without a tiling, an unknown soc, or no tiling for the
      platform.

  Example:
    >>> t = threshold_grad_v2_d_tiling(100000, np.float32)
    >>> t["block_dim"], t["tail_block_num"], t["small_core_data_num"], t["big_core_data_num"]
    (48, 27, 2048, 2112)
  """
  return _tiling(_native.threshold_grad_v2_d_tiling, num_elements, dtype, ub_size, core_num, soc)


def relu_grad_tiling(
  num_elements: int,
  dtype: npt.DTypeLike,
  ub_size: Optional[int] = None,
  core_num: Optional[int] = None,
  *,
  soc: str = DEFAULT_SOC,
) -> dict:
  """ReluGrad's tiling: the same scheme and UB divisors as `threshold_grad_v2_d_tiling`.

  Args:
    num_elements, dtype, ub_size, core_num, soc: as `threshold_grad_v2_d_tiling`.

  Returns:
    A dict of ElementwiseTiling's fields.

  Raises:
    ValueError: as `threshold_grad_v2_d_tiling`.

  Example:
    >>> relu_grad_tiling(4096, np.float16)["block_dim"]
    1
  """
  return _tiling(_native.relu_grad_tiling, num_elements, dtype, ub_size, core_num, soc)
