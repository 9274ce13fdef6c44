"""The XLA FFI custom call of threshold_backward: implementation "ffi".

`register()` (jax_threshold's __init__ calls it) registers the native handlers of the compiled
extension with XLA, its partitioner (partitioning.py) and the MLIR lowering with
`lowering.register_lowering_implementation`. The handlers run the aclnn two-phase executor on
the AscendC kernels (cpp/xla_ffi/ffi_handler.h). It registers nothing, and "ffi" is unavailable
with the reason, when the extension is missing, when its handlers were built for an XLA FFI API
the running jaxlib cannot load, or when the layout check cannot be installed in this JAX.

The lowering emits one target per platform (`jax_threshold.ffi_targets()`; its name comes from
the extension, whose registration list also keeps the names exported modules carry):
(grad_output, x, threshold) -> out, the threshold an operand (0-d, or batched by vmap: one custom
call for the whole batch) in the dtype docs/behaviour.md §1 compares in, and the attribute
`relu_grad`: the primitive's flag (a threshold known at trace time to be ±0), a static flag with
which the handler plans CANN's ReluGrad kernel without reading the threshold. Otherwise the kernel
reads the threshold on the device (ThresholdGradV2D, which gives ReluGrad's bits at 0), so one
compiled call serves every threshold value.

On a mesh the call is partitioned as an elementwise op (each device runs it on its own block):
`partitioning.py` gives it a Shardy sharding rule and registers an XLA partitioner for every
target name.

`out` is a buffer of its own, not an alias of `grad_output`: with the alias XLA copies
grad_output first, in a stand-alone call and in a training step's backward pass alike
(benchmarks/README.md, measurement log, "Aliasing").

Exporting: `jax.export` refuses custom calls it does not know. Pass
`disabled_checks=[jax.export.DisabledSafetyCheck.custom_call(t) for t in
jax_threshold.ffi_targets()]`; the process that deserializes and runs the
module must `import jax_threshold` (which registers the targets).

The sections below: the XLA FFI API version check, the layout check, the batch-transposed call,
the lowering and its registration, and where the wheel keeps the executor's header and library.
"""

import functools
import importlib.machinery
import importlib.metadata
import math
import os
import re
from typing import Iterable, cast

import jax
import jax.numpy as jnp
from jax import lax
from jax.extend.mlir import ir
from jax.interpreters import mlir
import jaxlib.version
import numpy as np

from jax_threshold import _dtypes
from jax_threshold import _shapes
from jax_threshold import _threshold
from jax_threshold import lowering as _lowering
from jax_threshold import partitioning as _partitioning
from jax_threshold.primitive import threshold_backward_p

# XLA custom-call platform -> JAX lowering platform. "ASCEND" is the custom-call
# platform of the community JAX Ascend PJRT plugin, whose JAX platform is "ascend";
# its handlers exist only in builds with JAX_THRESHOLD_ASCEND.
_LOWERING_PLATFORM = {"cpu": "cpu", "ASCEND": "ascend"}

# Lowering platforms where "auto" picks the custom call: on CPU XLA's fused select is faster
# (benchmarks/bench_threshold_backward.py; the README's "Speed"), so "auto" stays on the
# reference there. On an Ascend NPU the kernels are the point of the custom call.
_AUTO_PLATFORMS = frozenset({"ascend"})


# --- The XLA FFI API version ---------------------------------------------------------------
#
# A handler reports to XLA the XLA FFI API version of the headers it was compiled against. XLA
# accepts a handler whose version has XLA's major version and a minor version no newer than its
# own; anything else fails at registration, and on CPU that failure is raised when JAX
# initialises its backend: every later JAX call of the process fails, not only this package's.
# So `register` asks here first and, when the answer is no, registers nothing.
#
# The running jaxlib's API version is read from the `xla/ffi/api/c_api.h` that jaxlib ships
# (`jax.ffi.include_dir()`), the header of the very build that runs. Without it, the fallback is
# the jaxlib version: XLA keeps loading handlers built against older headers, so a jaxlib at
# least as new as the one whose headers the extension was built with accepts them.

ApiVersion = tuple[int, int]

_C_API_HEADER = os.path.join("xla", "ffi", "api", "c_api.h")
_DEFINE = re.compile(r"^\s*#\s*define\s+XLA_FFI_API_(MAJOR|MINOR)\s+(\d+)\s*$", re.MULTILINE)


# The jaxlib whose headers the wheels and `pip install .` build against (pyproject.toml's
# build requirement): the oldest supported, so that every supported jaxlib loads the handlers.
OLDEST_JAXLIB = "0.10.2"


class IncompatibleFfiApi(ImportError):
  """The extension's handlers would not register with the running jaxlib."""


def parse_c_api_header(text: str) -> ApiVersion | None:
  """(major, minor) from the text of xla/ffi/api/c_api.h, or None if it defines neither."""
  found = {m.group(1): m.group(2) for m in _DEFINE.finditer(text)}
  if "MAJOR" not in found or "MINOR" not in found:
    return None
  return int(found["MAJOR"]), int(found["MINOR"])


def running_api_version() -> ApiVersion | None:
  """The XLA FFI API version of the running jaxlib, or None if its header cannot be read."""
  try:
    with open(os.path.join(jax.ffi.include_dir(), _C_API_HEADER), encoding="utf-8") as f:
      return parse_c_api_header(f.read())
  except (OSError, AttributeError, UnicodeDecodeError):
    return None


def _release(version: str) -> tuple[int, ...] | None:
  """The numeric release of a version string ("0.12.0.1" -> (0, 12, 0, 1)), None if not one."""
  m = re.match(r"^\s*(\d+(?:\.\d+)*)", version)
  return tuple(int(p) for p in m.group(1).split(".")) if m else None


def _fmt(version: ApiVersion) -> str:
  return f"{version[0]}.{version[1]}"


def incompatibility(
  built: ApiVersion, running: ApiVersion | None, *, built_jaxlib: str, running_jaxlib: str
) -> str | None:
  """Why handlers built for XLA FFI API `built` cannot be registered here; None if they can.

  Args:
    built: the API version the handlers were compiled against.
    running: the running jaxlib's API version, None if unknown.
    built_jaxlib: version of the jaxlib whose headers the build used ("" if unknown).
    running_jaxlib: version of the running jaxlib.

  Returns:
    None when registering is safe, else a message saying why not and what to install.
  """
  headers = f"jaxlib {built_jaxlib}'s" if built_jaxlib else "the"
  if running is not None:
    if running[0] == built[0] and built[1] <= running[1]:
      return None
    why = (
      f"jax_threshold's XLA FFI handlers were built against {headers} XLA FFI headers (API "
      f"{_fmt(built)}), which jaxlib {running_jaxlib} (API {_fmt(running)}) cannot load"
    )
  else:
    built_release, running_release = _release(built_jaxlib), _release(running_jaxlib)
    if (
      built_release is not None
      and running_release is not None
      and (running_release >= built_release)
    ):
      return None
    why = (
      f"jax_threshold cannot tell the XLA FFI API version of jaxlib {running_jaxlib} (no "
      f"readable {_C_API_HEADER} in jax.ffi.include_dir()), and its handlers were built "
      f"against {headers} headers (API {_fmt(built)})"
    )
  upgrade = (
    f"`pip install -U 'jaxlib>={built_jaxlib}'`" if built_jaxlib else "install a newer jaxlib"
  )
  return (
    f"{why}. Registering them would break JAX's CPU backend, so implementation 'ffi' is "
    f"disabled; JAX and the reference lowering work as usual. To use 'ffi': {upgrade}, "
    f"or reinstall jax-threshold from its wheel or with `pip install --force-reinstall .` "
    f"in its source tree (both build against jaxlib {OLDEST_JAXLIB}'s headers, which "
    f"every supported jaxlib loads)."
  )


def check_api_version(native) -> None:
  """Raises IncompatibleFfiApi when the native module's handlers cannot load in this jaxlib.

  Args:
    native: the extension module (jax_threshold._aclnn_ext), built with the FFI handler.
  """
  reason = incompatibility(
    tuple(native.XLA_FFI_API_VERSION),
    running_api_version(),
    built_jaxlib=native.XLA_FFI_HEADERS_JAXLIB_VERSION,
    running_jaxlib=jaxlib.version.__version__,
  )
  if reason is not None:
    raise IncompatibleFfiApi(reason)


# --- The layout check ----------------------------------------------------------------------
#
# The handler reads every buffer row-major, and XLA FFI hands it no layout: a custom call that
# declares other `operand_layouts` / `result_layouts` (via `jax.ffi.ffi_call(...,
# input_layouts=...)`, or an edited `jax.export` module) would get its buffers in that physical
# order and be read wrongly. The layouts are visible only in the StableHLO `custom_call` op, so
# they are checked where JAX builds that op for the program it compiles:
#
# - `jax.ffi.ffi_call` to one of the project's targets: after JAX's own lowering rule has built
#   the op (wrapping the `ffi_call` primitive's rule);
# - a `jax.export.Exported` being called (also after deserialization): its module is read
#   before JAX inlines it (wrapping the exported-call rule).
#
# Either raises `ValueError` at lowering time. The project's own lowering declares row-major.
# Under SPMD partitioning the partitioner replaces the call by a per-device call that declares
# row-major, so XLA lays the blocks out row-major for it. What is not checked: a module compiled
# without JAX's lowering (StableHLO or HLO handed to XLA directly); there nothing in reach of the
# project sees the layouts. The check is installed before anything is registered; where this
# JAX keeps those rules elsewhere, "ffi" stays unavailable (`LayoutCheckUnavailable`).


class LayoutCheckUnavailable(ImportError):
  """This JAX keeps the lowering rules the layout check wraps elsewhere."""


_CUSTOM_CALL = "stablehlo.custom_call"


def _rank(value_type) -> int | None:
  try:
    return ir.RankedTensorType(value_type).rank
  except (ValueError, TypeError):
    return None  # a token or tuple: the handler refuses those calls itself


def _layouts(op, name):
  if name not in op.attributes:
    return None  # XLA's default: row-major
  # Iterable at run time; the MLIR stubs do not say so.
  return [
    list(cast(Iterable[int], ir.DenseIntElementsAttr(a))) for a in ir.ArrayAttr(op.attributes[name])
  ]


def check_custom_call(op, targets) -> None:
  """ValueError if `op` is a custom call to one of `targets` with a non-row-major layout."""
  if op.name != _CUSTOM_CALL:
    return
  target = ir.StringAttr(op.attributes["call_target_name"]).value
  if target not in targets:
    return
  for kind, attribute, values in (
    ("operand", "operand_layouts", op.operands),
    ("result", "result_layouts", op.results),
  ):
    layouts = _layouts(op, attribute)
    if layouts is None:
      continue
    for i, (layout, value) in enumerate(zip(layouts, values)):
      rank = _rank(value.type)
      if rank is not None and layout != list(range(rank - 1, -1, -1)):
        raise ValueError(
          f"jax_threshold: custom call {target} declares {kind} {i} with layout "
          f"(minor_to_major) {layout}; it reads and writes every buffer row-major "
          f"({list(range(rank - 1, -1, -1))}) and XLA FFI does not tell it otherwise"
        )


def check_module(module, targets) -> None:
  """check_custom_call for every op of an MLIR module (nested regions included)."""

  def walk(operation):
    for region in operation.regions:
      for block in region.blocks:
        for child in block.operations:
          check_custom_call(child.operation, targets)
          walk(child.operation)

  walk(module.operation)


def _checked_ffi_call_rule(rule, targets):
  def lowering(ctx, *operands, **params):
    results = rule(ctx, *operands, **params)
    if params.get("target_name") in targets:
      flat = [r for r in results for r in (r if isinstance(r, (list, tuple)) else [r])]
      if flat:
        check_custom_call(flat[0].owner.operation, targets)
      elif operands:  # no results: find the op among the operands' users
        for use in operands[0].uses:
          check_custom_call(use.owner.operation, targets)
    return results

  return lowering


def _checked_exported_rule(rule, targets):
  def lowering(ctx, *args, exported, **params):
    text = exported.mlir_module()
    if any(t in text for t in targets):
      with mlir.make_ir_context():
        check_module(ir.Module.parse(text), targets)
    return rule(ctx, *args, exported=exported, **params)

  return lowering


def install_layout_check(targets) -> bool:
  """Wraps JAX's lowering rules of `jax.ffi.ffi_call` and of exported calls with the check.

  Returns False (nothing installed) where this JAX keeps those rules elsewhere.
  """
  try:
    from jax._src import ffi as _jax_ffi  # the rules have no public registry
    from jax._src.export import _export
    from jax._src.interpreters import mlir as _mlir

    entries = [
      (_jax_ffi.ffi_call_p, _checked_ffi_call_rule),
      (_export.call_exported_p, _checked_exported_rule),
    ]
    current = [(_mlir._lowerings[p], wrap) for p, wrap in entries]  # pylint: disable=protected-access
  except (ImportError, AttributeError, KeyError):
    return False
  targets = frozenset(targets)
  for (prim, _), (entry, wrap) in zip(entries, current):
    rule = getattr(entry, "rule", entry)
    if getattr(rule, "_jax_threshold_layout_check", False):
      continue
    checked = wrap(rule, targets)
    checked._jax_threshold_layout_check = True  # pylint: disable=protected-access
    mlir.register_lowering(prim, checked, inline=getattr(entry, "inline", True))
  return True


# --- The batch-transposed call (CPU) -------------------------------------------------------
#
# `vmap` over B thresholds of a function on an x of N elements gives the primitive a threshold
# of shape (B, 1, ..., 1) and an output of B x N. The custom call plans once and runs the kernel
# once per threshold element (a slice of the batch), so B = 10^6 thresholds on N = 3 elements
# are 10^6 kernel runs of 3 elements each: a kernel's fixed work per run for a few elements of
# data. This rewrites the call so that the kernel runs N times on B elements instead, with the
# roles of x and the threshold swapped:
#
#     x[j] > t[b]  <=>  key(t[b]) > key(x[j])
#
# for an order-reversing map `key` that is exact on both operands: negation for floats (NaN
# stays NaN, so either side being NaN still fails; -0 and +0 stay equal), bitwise NOT for
# integers (~v = -1 - v reverses the order of every signed and unsigned value without
# overflow). So one custom call with x' = key(t) of shape (1, B), threshold' = key(x) of shape
# (N, 1) and grad_output' = grad_output moved to (N, B) (or (N, 1) when it does not vary over
# the batch) computes out transposed: N slices of B elements each. The same kernels select the
# same bits; only the number of kernel runs changes.
#
# The comparison type decides what key(t) can be:
#   float32 / float64 x: the threshold has x's dtype: key = negation, grad_output as it is.
#   float16 / bfloat16 x: the comparison is in float32 (docs/behaviour.md §1) and key(t) needs
#     float32, so the call runs the float32 kernel; grad_output travels as its 16 bits
#     zero-extended in a float32 (a select moves bits, and the handler runs with subnormals as
#     numbers), and the result's low 16 bits are the answer.
#   integer x with a threshold of its own dtype D: key = bitwise NOT, in D.
#   int8 / uint8 / int32 x with a float threshold t (compared as a real): k = floor(t), clamped
#     to [min(D) - 1, max(D)] (below: every x passes; at or above max(D), or NaN: none passes)
#     is exact in a wider integer type W (int32, or int64 for int32 x under x64), and
#     x > t <=> ~k > ~x in W; grad_output is widened to W and narrowed back, both exact.
# Everything else (int64 x with a float threshold, int32 x with one without x64, symbolic
# shapes, a call the SPMD partitioner will split) keeps one kernel run per threshold.
#
# Only on CPU: the NPU handler takes no broadcast operands (README, NPU build).

# Transpose only where it cuts kernel runs by a wide margin: at most this many elements per
# threshold (one kernel run each), and at least this many thresholds per element.
MAX_ELEMENTS_PER_THRESHOLD = 256
MIN_THRESHOLDS_PER_ELEMENT = 16

_F32 = np.dtype(np.float32)


def _static_shape(shape):
  return all(isinstance(d, (int, np.integer)) for d in shape)


def _wide_integer(x_dtype):
  """The integer type W that holds [min(D) - 1, max(D)] for integer x of dtype D, or None."""
  if np.iinfo(x_dtype).bits <= 16:
    return np.dtype(np.int32)
  if np.iinfo(x_dtype).bits == 32 and jax.dtypes.canonicalize_dtype(np.int64) == np.int64:
    return np.dtype(np.int64)
  return None


def runs_batch_transposed(ctx) -> bool:
  """Whether the call of lowering context `ctx` runs batch-transposed (see above)."""
  g_aval, x_aval, t_aval = ctx.avals_in
  out_aval = ctx.avals_out[0]
  shapes = (g_aval.shape, x_aval.shape, t_aval.shape, out_aval.shape)
  if t_aval.ndim == 0 or not all(_static_shape(s) for s in shapes):
    return False
  # One device: a call the partitioner splits keeps its elementwise form (partitioning.py).
  if getattr(ctx.module_context.axis_context, "num_devices", None) != 1:
    return False
  out_shape = tuple(out_aval.shape)
  p = _shapes.batch_split(t_aval.shape)
  x_padded = _shapes.right_align(x_aval.shape, len(out_shape))
  if p == 0 or any(d != 1 for d in x_padded[:p]):
    return False  # x varies over the batch: no scalar per slice after swapping roles
  thresholds, elements = math.prod(out_shape[:p]), math.prod(out_shape[p:])
  if elements > MAX_ELEMENTS_PER_THRESHOLD or thresholds < MIN_THRESHOLDS_PER_ELEMENT * elements:
    return False
  x_dtype, t_dtype = np.dtype(x_aval.dtype), np.dtype(t_aval.dtype)
  if _dtypes.is_integer(x_dtype) and t_dtype != x_dtype:
    return _wide_integer(x_dtype) is not None
  return True


def _integer_threshold_in(threshold, x_dtype, wide):
  """floor(t) of a float threshold, clamped to [min(D) - 1, max(D)], exactly, in `wide`.

  x > t <=> x > k with k that clamp (docs/behaviour.md §1): min(D) - 1 lets every x pass,
  max(D) none.
  """
  info = np.iinfo(x_dtype)
  k, all_pass, in_range = _threshold.integer_threshold(threshold, x_dtype)
  below = np.asarray(int(info.min) - 1, wide)
  none_pass = np.asarray(info.max, wide)
  return jnp.where(
    in_range, lax.convert_element_type(k, wide), jnp.where(all_pass, below, none_pass)
  )


def _encode_transposed(grad_output, x, threshold):
  """(grad_output', key(x), key(threshold), decode) in the comparison type (see above)."""
  x_dtype, t_dtype = np.dtype(x.dtype), np.dtype(threshold.dtype)
  same = lambda v: v
  if x_dtype in (_F32, np.dtype(np.float64)):
    return grad_output, -x, -threshold, same
  if _dtypes.is_floating(x_dtype):  # float16 / bfloat16: the float32 kernel, bits carried
    carry = lambda v: lax.bitcast_convert_type(
      lax.convert_element_type(lax.bitcast_convert_type(v, np.uint16), np.uint32), np.float32
    )
    decode = lambda v: lax.bitcast_convert_type(
      lax.convert_element_type(lax.bitcast_convert_type(v, np.uint32), np.uint16), x_dtype
    )
    return carry(grad_output), -_threshold.to_float32(x), -threshold, decode
  if t_dtype == x_dtype:
    return grad_output, lax.bitwise_not(x), lax.bitwise_not(threshold), same
  wide = _wide_integer(x_dtype)
  k = _integer_threshold_in(threshold, x_dtype, wide)
  widen = lambda v: lax.convert_element_type(v, wide)
  narrow = lambda v: lax.convert_element_type(v, x_dtype)
  return widen(grad_output), lax.bitwise_not(widen(x)), lax.bitwise_not(k), narrow


def threshold_backward_transposed(grad_output, x, threshold, *, implementation):
  """The primitive's result, computed by one custom call over (N, B) (see above)."""
  out_shape = _shapes.output_shape(grad_output.shape, x.shape, threshold.shape)
  rank = len(out_shape)
  p = _shapes.batch_split(threshold.shape)
  batch, inner = out_shape[:p], out_shape[p:]
  thresholds, elements = math.prod(batch), math.prod(inner)
  pad = lambda v: lax.expand_dims(v, tuple(range(rank - v.ndim)))
  grad_output, x = pad(grad_output), pad(x)
  g_key, x_key, t_key, decode = _encode_transposed(grad_output, x, threshold)
  # threshold' = key(x): one scalar per slice, along the leading dim.
  x_key = jnp.broadcast_to(x_key, (1,) * p + inner).reshape(elements, 1)
  # x' = key(t): the batch, along the trailing dim.
  t_key = jnp.broadcast_to(t_key, batch + (1,) * (rank - p)).reshape(1, thresholds)
  # grad_output' in full, (N, B): each slice reads its own row.
  if all(d == 1 for d in grad_output.shape[:p]):
    g_key = jnp.broadcast_to(g_key, (1,) * p + inner).reshape(elements, 1)
    g_key = lax.broadcast_in_dim(g_key, (elements, thresholds), (0, 1))
  else:
    g_key = jnp.broadcast_to(g_key, out_shape).reshape(thresholds, elements).T
  out = threshold_backward_p.bind(g_key, t_key, x_key, implementation=implementation)
  return decode(out.T.reshape(out_shape))


_batch_transposed_lowering = mlir.lower_fun(threshold_backward_transposed, multiple_results=False)


# --- The lowering and its registration -----------------------------------------------------


def _ffi_rule(target, ctx):
  """jax.ffi's lowering of `target`, with the elementwise Shardy rule when Shardy partitions."""
  rule = None
  if _partitioning.use_shardy():
    rule = _partitioning.sharding_rule([a.shape for a in ctx.avals_in], ctx.avals_out[0].shape)
  extra = None if rule is None else {"sdy.sharding_rule": rule}
  return jax.ffi.ffi_lowering(target, extra_attributes=extra)


# ReluGrad's phase one (the aclScalar form) takes grad_output and x of at most this rank
# (docs/behaviour.md §2); above it the call reads its threshold of 0, which gives the same bits.
_RELU_GRAD_MAX_RANK = 8


def _ffi_lowering(
  ctx, grad_output, x, threshold, *, implementation, target, platform, relu_grad=False
):
  """Lowers threshold_backward to the XLA FFI custom call `target` (partitioned on a mesh).

  On CPU, a vmap-batched threshold over a small x runs batch-transposed (above): the kernel
  runs along the batch axis instead of once per threshold.
  """
  del implementation  # already resolved to "ffi" by lowering.py
  if platform == "cpu" and runs_batch_transposed(ctx):
    return _batch_transposed_lowering(ctx, grad_output, x, threshold, implementation="ffi")
  g_aval, x_aval, t_aval = ctx.avals_in
  relu_grad = (
    relu_grad and t_aval.ndim == 0 and max(g_aval.ndim, x_aval.ndim) <= _RELU_GRAD_MAX_RANK
  )
  return _ffi_rule(target, ctx)(ctx, grad_output, x, threshold, relu_grad=relu_grad)


def _extension():
  """The compiled extension, with its XLA FFI handlers, or ImportError saying what is missing."""
  try:
    from jax_threshold import _aclnn_ext  # type: ignore[attr-defined]  # compiled, no stub
  except ImportError as e:  # a source tree without the compiled extension
    raise ImportError(f"jax_threshold._aclnn_ext is not built ({e})") from e
  if not hasattr(_aclnn_ext, "ffi_handlers"):
    raise ImportError(
      "jax_threshold._aclnn_ext was built without the XLA FFI handler "
      "(the XLA FFI headers of jaxlib were not found at build time)"
    )
  return _aclnn_ext


def _register_types_now() -> None:
  """Makes jax.ffi.register_ffi_type reach XLA at once on CPU.

  XLA refuses a handler whose state type it does not know yet. Registrations made before the CPU
  backend exists wait in jaxlib's xla_client, and its CPU client flushes the waiting targets
  before the waiting types; installing the type handler that client installs (the same
  function: a no-op once installed) registers the types first.
  """
  from jaxlib import xla_client  # noqa: PLC0415

  xla_client.register_custom_type_handler("cpu", xla_client._xla.register_custom_type)


def register() -> None:
  """Registers the handlers, the partitioner, the layout check and the "ffi" lowering.

  Raises (registering nothing): ImportError without the extension, IncompatibleFfiApi when the
  running jaxlib cannot load its handlers, LayoutCheckUnavailable when this JAX keeps the
  lowering rules the layout check wraps elsewhere.
  """
  native = _extension()
  # Before anything is registered: a handler the running jaxlib cannot load would break JAX.
  check_api_version(native)
  handlers = native.ffi_handlers()
  names = sorted({name for name, _, _ in handlers})
  if not install_layout_check(names):
    raise LayoutCheckUnavailable(
      f"jax_threshold cannot check the layouts of its custom calls in jax {jax.__version__} "
      "(the lowering rules of jax.ffi.ffi_call and of exported calls are not where it "
      "looks), and the handler reads every buffer row-major; implementation 'ffi' is "
      "disabled, the reference lowering works as usual"
    )
  platforms = set()
  types = native.ffi_types()
  if types:
    _register_types_now()
  for name, platform, registration in types:
    jax.ffi.register_ffi_type(name, registration, platform=platform)
  for name, platform, capsule in handlers:
    jax.ffi.register_ffi_target(name, capsule, platform=platform)
    platforms.add(platform)
  _partitioning.register_partitioner(names)
  for platform in sorted(platforms):
    lowering_platform = _LOWERING_PLATFORM.get(platform)
    if lowering_platform is None:
      continue
    try:
      _lowering.register_lowering_implementation(
        "ffi",
        functools.partial(_ffi_lowering, target=native.FFI_TARGET, platform=lowering_platform),
        platform=lowering_platform,
        ffi_targets=(native.FFI_TARGET,),
        use_for_auto=lowering_platform in _AUTO_PLATFORMS,
      )
    except NotImplementedError:
      # JAX does not know the platform: the NPU build without the Ascend PJRT plugin installed.
      if platform == "cpu":
        raise


# --- Where the wheel keeps the executor's C++ header and shared library --------------------
#
#     g++ ... -I$(python -c "import jax_threshold; print(jax_threshold.get_include())") \
#         -L$(python -c "import jax_threshold; print(jax_threshold.get_lib())") -ljax_threshold_aclnn
#
# Wheel layout (cpp/CMakeLists.txt installs it):
#     jax_threshold/include/jax_threshold/aclnn_threshold_backward.h
#     jax_threshold/lib/libjax_threshold_aclnn.so

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
DISTRIBUTION = "jax-threshold"

LIBRARY_NAME = "jax_threshold_aclnn"


def get_include() -> str:
  """The directory holding the executor's C++ header.

  Returns:
    A path to add to the include path, for
    `#include "jax_threshold/aclnn_threshold_backward.h"`.

  Example:
    >>> jax_threshold.get_include()
    '.../site-packages/jax_threshold/include'
  """
  return os.path.join(_PACKAGE_DIR, "include")


def get_lib() -> str:
  """The directory holding the executor's shared library.

  Returns:
    The directory of libjax_threshold_aclnn.so: link with
    `-L<get_lib()> -ljax_threshold_aclnn` (and an rpath to it).

  Example:
    >>> jax_threshold.get_lib()
    '.../site-packages/jax_threshold/lib'
  """
  return os.path.join(_PACKAGE_DIR, "lib")


def source_tree_shadowing() -> str | None:
  """Why the native extension is missing when a source tree hides the installed package, or None.

  The typical case: `pip install .`, then `python` in the repository root, where the checkout's
  `jax_threshold/` (no compiled `_aclnn_ext`) comes first on sys.path. Detected as: the imported
  package has no `_aclnn_ext`, but an installed jax-threshold distribution has one elsewhere.
  """
  if any(
    os.path.exists(os.path.join(_PACKAGE_DIR, "_aclnn_ext" + suffix))
    for suffix in importlib.machinery.EXTENSION_SUFFIXES
  ):
    return None
  try:
    dist = importlib.metadata.distribution(DISTRIBUTION)
  except importlib.metadata.PackageNotFoundError:
    return None
  located = [
    str(dist.locate_file(f))
    for f in dist.files or ()
    if f.parts[:1] == ("jax_threshold",) and f.name.startswith("_aclnn_ext.")
  ]
  installed = [os.path.dirname(os.path.abspath(f)) for f in located if os.path.exists(f)]
  if not installed or any(os.path.samefile(d, _PACKAGE_DIR) for d in installed):
    return None
  tree = os.path.dirname(_PACKAGE_DIR)
  if os.path.abspath(os.getcwd()) == tree:
    where = "the source tree in the current directory"
    remedy = "run from another directory"
  else:
    where = f"the source tree at {tree}"
    remedy = "take it off sys.path (PYTHONPATH) or run from another directory"
  return (
    f"{where} shadows the installed jax-threshold; {remedy} (the installed package, "
    f"with its native extension: {installed[0]})"
  )
