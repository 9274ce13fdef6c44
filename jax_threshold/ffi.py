"""The XLA FFI custom call of threshold_backward: implementation "ffi".

`register()` (jax_threshold's __init__ calls it) registers the native handlers of the compiled
extension with XLA, their partitioner (partitioning.py, the one module that reaches into JAX's
internals, imported here only) and the MLIR lowering with
`lowering.register_lowering_implementation`. The handlers run the aclnn two-phase executor on
the AscendC kernels (cpp/xla_ffi/ffi_handler.h). It registers nothing, and "ffi" is unavailable
with the reason, when the extension is missing, when its handlers were built for an XLA FFI API
the running jaxlib cannot load, or when this JAX keeps the internals partitioning.py needs
elsewhere.

The lowering emits one target per platform (`jax_threshold.ffi_targets()`; its name comes from
the extension, whose registration list also keeps the names exported modules carry):
(grad_output, x, threshold) -> out, the threshold an operand (0-d, or batched by vmap: one custom
call for the whole batch) in the dtype docs/behaviour.md §1 compares in, and the attribute
`relu_grad`: the primitive's flag (a threshold known at trace time to be ±0), a static flag with
which the handler plans CANN's ReluGrad kernel without reading the threshold. Otherwise the kernel
reads the threshold on the device (ThresholdGradV2D, which gives ReluGrad's bits at 0), so one
compiled call serves every threshold value.

The handlers read every buffer row-major: XLA FFI hands them no layout, and this package's
lowering declares row-major. A custom call that declares other layouts is not supported.

On a mesh the call is partitioned as an elementwise op (each device runs it on its own block):
the lowering attaches a Shardy sharding rule, and partitioning.py registers an XLA partitioner
for every target name.

`out` is a buffer of its own, not an alias of `grad_output`: with the alias XLA copies
grad_output first, in a stand-alone call and in a training step's backward pass alike
(benchmarks/README.md, measurement log, "Aliasing").

Exporting: `jax.export` refuses custom calls it does not know. Pass
`disabled_checks=[jax.export.DisabledSafetyCheck.custom_call(t) for t in
jax_threshold.ffi_targets()]`; the process that deserializes and runs the
module must `import jax_threshold` (which registers the targets).
"""

import functools
import importlib.machinery
import importlib.metadata
import math
import os
import re

import jax
import jax.numpy as jnp
from jax import lax
from jax.extend.mlir.dialects import sdy
from jax.interpreters import mlir
import jax.lib
import numpy as np

from jax_threshold import _dtypes
from jax_threshold import _shapes
from jax_threshold import _threshold
from jax_threshold import lowering as _lowering
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
# XLA accepts a handler built against its own major version and a minor version no newer than
# its own; anything else fails when JAX initialises its CPU backend, breaking every later JAX
# call of the process. So `register` asks first: the running jaxlib's version is read from the
# c_api.h it ships (`jax.ffi.include_dir()`), else inferred from the jaxlib version (XLA keeps
# loading handlers built against older headers).

ApiVersion = tuple[int, int]

_C_API_HEADER = os.path.join("xla", "ffi", "api", "c_api.h")
_DEFINE = re.compile(r"^\s*#\s*define\s+XLA_FFI_API_(MAJOR|MINOR)\s+(\d+)\s*$", re.MULTILINE)


# The jaxlib whose headers the wheels and `pip install .` build against (pyproject.toml's
# build requirement): the oldest supported, so that every supported jaxlib loads the handlers.
OLDEST_JAXLIB = "0.10.2"


class FfiUnavailable(ImportError):
  """The running jax/jaxlib cannot take the extension's custom call (the reason says why)."""


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
      f"{built[0]}.{built[1]}), which jaxlib {running_jaxlib} (API {running[0]}.{running[1]}) "
      "cannot load"
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
      f"against {headers} headers (API {built[0]}.{built[1]})"
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
  """Raises FfiUnavailable when the native module's handlers cannot load in this jaxlib.

  Args:
    native: the extension module (jax_threshold._native), built with the FFI handler.
  """
  reason = incompatibility(
    tuple(native.XLA_FFI_API_VERSION),
    running_api_version(),
    built_jaxlib=native.XLA_FFI_HEADERS_JAXLIB_VERSION,
    running_jaxlib=jax.lib.__version__,
  )
  if reason is not None:
    raise FfiUnavailable(reason)


# --- The batch-transposed call (CPU) -------------------------------------------------------
#
# `vmap` over B thresholds of a function on x of N elements gives an output of B x N and a
# threshold of shape (B, 1, ..., 1): the kernel runs once per threshold, B runs of N elements.
# For small N and large B the call is rewritten so that it runs N times on B elements, with the
# roles of x and the threshold swapped: x[j] > t[b] <=> key(t[b]) > key(x[j]) for an exact
# order-reversing `key` (negation for floats, NaN staying NaN; bitwise NOT for integers). One
# custom call with x' = key(t) of shape (1, B), threshold' = key(x) of shape (N, 1) and
# grad_output moved to (N, B) computes out transposed, with the same bits:
#   float32 / float64 x: key = negation.
#   float16 / bfloat16 x: the comparison is in float32, so the float32 kernel runs, grad_output
#     carried as its 16 bits in a float32 (a select moves bits) and read back from the result.
#   integer x of dtype D with a threshold of dtype D: key = bitwise NOT, in D.
#   int8 / uint8 / int32 x with a float threshold: floor(t) clamped to [min(D) - 1, max(D)] is
#     exact in a wider integer type W (int32; int64 for int32 under x64), and grad_output is
#     widened to W and narrowed back.
# Anything else (int64 x with a float threshold, int32 x with one without x64, symbolic shapes,
# a call the SPMD partitioner splits) keeps one kernel run per threshold. CPU only: the NPU
# handler takes no broadcast operands.

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


def sharding_rule(operand_shapes, out_shape):
  """The Shardy rule of an elementwise op with NumPy broadcasting, or None for symbolic shapes.

  One factor per output dim, shared by every operand dim of the same size; a dim an operand is
  broadcast along (size 1, or missing) gets a size-1 factor of its own, so it is never sharded.
  """
  shapes = [tuple(s) for s in operand_shapes] + [tuple(out_shape)]
  if not all(isinstance(d, int) for s in shapes for d in s):
    return None  # shape polymorphism: factor sizes must be known; XLA gathers instead
  out_shape = tuple(out_shape)
  factor_sizes = list(out_shape)
  operand_mappings = []
  for shape in operand_shapes:
    stretched = _shapes.broadcast_dims(shape, out_shape)
    dims = []
    for i in range(len(out_shape) - len(shape), len(out_shape)):
      factor = i
      if i in stretched:
        factor_sizes.append(1)
        factor = len(factor_sizes) - 1
      dims.append(sdy.DimMappingAttr.get(factor_indices=[factor]))
    operand_mappings.append(sdy.TensorMappingAttr.get(dim_mappings=dims))
  result = sdy.TensorMappingAttr.get(
    dim_mappings=[sdy.DimMappingAttr.get(factor_indices=[i]) for i in range(len(out_shape))]
  )
  return sdy.OpShardingRuleAttr.get(
    factor_sizes=factor_sizes,
    operand_mappings=operand_mappings,
    result_mappings=[result],
    is_custom=True,
  )


# Read by name: jax 0.10.2's typing of jax.config does not declare the flag.
_USE_SHARDY = "jax_use_shardy_partitioner"


def _ffi_rule(target, ctx):
  """jax.ffi's lowering of `target`, with the elementwise Shardy rule when Shardy partitions."""
  extra = None
  if getattr(jax.config, _USE_SHARDY):
    rule = sharding_rule([a.shape for a in ctx.avals_in], ctx.avals_out[0].shape)
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
    from jax_threshold import _native  # type: ignore[attr-defined]  # compiled, no stub
  except ImportError as e:  # a source tree without the compiled extension
    raise ImportError(f"jax_threshold._native is not built ({e})") from e
  if not hasattr(_native, "ffi_handlers"):
    raise ImportError(
      "jax_threshold._native was built without the XLA FFI handler "
      "(the XLA FFI headers of jaxlib were not found at build time)"
    )
  return _native


def register() -> None:
  """Registers the handlers, the partitioner and the "ffi" lowering.

  Raises (registering nothing): ImportError without the extension, FfiUnavailable when the
  running jaxlib cannot load its handlers or this JAX keeps the internals partitioning.py uses
  elsewhere.
  """
  native = _extension()
  # Before anything is registered: a handler the running jaxlib cannot load would break JAX.
  check_api_version(native)
  handlers = native.ffi_handlers()
  names = sorted({name for name, _, _ in handlers})
  try:
    from jax_threshold import partitioning as _partitioning  # JAX internals: imported here only
  except (ImportError, AttributeError) as e:
    raise FfiUnavailable(
      f"jax_threshold's custom call needs JAX internals that jax {jax.__version__} keeps "
      f"elsewhere ({type(e).__name__}: {e}); implementation 'ffi' is disabled, the reference "
      "lowering works as usual"
    ) from e
  platforms = set()
  types = native.ffi_types()
  if types:
    _partitioning.register_types_now()
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


# --- Where the wheel keeps the executor's C++ header and shared library (cpp/CMakeLists.txt) ---

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
DISTRIBUTION = "jax-threshold"


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
  `jax_threshold/` (no compiled `_native`) comes first on sys.path. Detected as: the imported
  package has no `_native`, but an installed jax-threshold distribution has one elsewhere.
  """
  if any(
    os.path.exists(os.path.join(_PACKAGE_DIR, "_native" + suffix))
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
    if f.parts[:1] == ("jax_threshold",) and f.name.startswith("_native.")
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
