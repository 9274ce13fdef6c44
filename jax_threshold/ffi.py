"""The XLA FFI custom call of threshold_backward: implementation "ffi".

Importing this module (jax_threshold's __init__ does, when the compiled
extension exists) registers the native handlers with XLA and the MLIR lowering
with `lowering.register_lowering_implementation`. The handlers run the aclnn
two-phase executor on the AscendC kernels (cpp/xla_ffi/ffi_handler.h).

Targets (versioned; `ffi_targets()` lists them):
  jax_threshold_threshold_backward_v1: (grad_output, x, threshold) -> out, the
    threshold an operand (0-d, or batched by vmap: one custom call for the
    whole batch).
  jax_threshold_threshold_backward_static_v1: (grad_output, x) -> out, the
    threshold a compile-time constant in attributes threshold_dtype (str),
    threshold_float (f64) and threshold_int (i64); used when the lowering sees
    a 0-d constant threshold. Both keep docs/behaviour.md §1's precision: the value
    reaches the executor in the operand's own dtype.
  jax_threshold_threshold_backward_relu_grad_v1: (grad_output, x) -> out, the
    threshold exactly 0: the primitive's `relu_grad` flag (a threshold known
    at trace time to be ±0) selects it, and the handler plans CANN's ReluGrad
    kernel (the operand target's kernel reads a traced threshold on the device,
    so it always runs ThresholdGradV2D, which gives the same bits at 0).

On a mesh the call is partitioned as an elementwise op (each device runs it on
its own block): `partitioning.py` gives it a Shardy sharding rule and registers
an XLA partitioner for these target names.

`out` is a buffer of its own, not an alias of `grad_output`: measured on CPU
(benchmarks/README.md, "Speed"), aliasing made XLA copy grad_output first in
a stand-alone call and also in the Flax training step's backward pass (two
copies per step, no step faster), while a fresh output of 8 MiB or more gets
huge pages from the handler and costs little.

Exporting: `jax.export` refuses custom calls it does not know. Pass
`disabled_checks=[jax.export.DisabledSafetyCheck.custom_call(t) for t in
jax_threshold.ffi_targets()]`; the process that deserializes and runs the
module must `import jax_threshold` (which registers the targets).
"""

import functools

import numpy as np

import jax
from jax.interpreters import mlir

from jax_threshold import batch_transpose as _batch_transpose
from jax_threshold import ffi_api_version as _ffi_api_version
from jax_threshold import layout_check as _layout_check
from jax_threshold import lowering as _lowering
from jax_threshold import partitioning as _partitioning

try:
  from jax_threshold import _aclnn_ext
except ImportError as e:  # a source tree without the compiled extension
  raise ImportError(f"jax_threshold._aclnn_ext is not built ({e})") from e

if not hasattr(_aclnn_ext, "ffi_handlers"):
  raise ImportError(
    "jax_threshold._aclnn_ext was built without the XLA FFI handler "
    "(the XLA FFI headers of jaxlib were not found at build time)"
  )

# Before anything is registered: a handler the running jaxlib cannot load would break JAX.
_ffi_api_version.check(_aclnn_ext)

TARGET = "jax_threshold_threshold_backward_v1"
STATIC_TARGET = "jax_threshold_threshold_backward_static_v1"
RELU_GRAD_TARGET = "jax_threshold_threshold_backward_relu_grad_v1"

# XLA custom-call platform -> JAX lowering platform. "ASCEND" is the custom-call
# platform of the community JAX Ascend PJRT plugin, whose JAX platform is "ascend";
# its handlers exist only in builds with JAX_THRESHOLD_ASCEND.
_LOWERING_PLATFORM = {"cpu": "cpu", "ASCEND": "ascend"}

# Lowering platforms where "auto" picks the custom call, from the benchmark
# (benchmarks/bench_threshold_backward.py; the README's "Speed" section has the
# numbers): on CPU XLA's fused select is faster, so "auto" stays on the reference
# there. On an Ascend NPU the kernels are the point of the custom call.
_AUTO_PLATFORMS = frozenset({"ascend"})

# Threshold operand dtypes the static target carries (primitive.py's convention).
_STATIC_DTYPES = frozenset(
  np.dtype(d).name for d in (np.float32, np.float64, np.int8, np.uint8, np.int32, np.int64)
)


def ffi_targets() -> tuple[str, ...]:
  """The custom-call target names this module's lowering emits."""
  return (TARGET, STATIC_TARGET, RELU_GRAD_TARGET)


def _constant_threshold(threshold: mlir.ir.Value, aval):
  """The Python value of a 0-d threshold that is a `stablehlo.constant`, else None.

  lowering.py keeps JAX's default (cacheable) lowering, where the equation is
  outlined and the threshold is a block argument: then this is None and the
  operand target runs, which is just as exact. A constant shows only when the
  equation is lowered inline.
  """
  if aval.shape != () or np.dtype(aval.dtype).name not in _STATIC_DTYPES:
    return None
  try:
    op = threshold.owner
    if not hasattr(op, "operation") or op.operation.name != "stablehlo.constant":
      return None
    splat = mlir.ir.DenseElementsAttr(op.attributes["value"]).get_splat_value()
    if np.issubdtype(aval.dtype, np.integer):
      return int(mlir.ir.IntegerAttr(splat).value)
    return float(mlir.ir.FloatAttr(splat).value)
  except Exception:  # pylint: disable=broad-except  (anything unexpected: use the operand)
    return None


def _static_attributes(value, dtype: np.dtype) -> dict:
  """threshold_dtype/threshold_float/threshold_int with the handler's attribute types."""
  if np.issubdtype(dtype, np.integer):
    info = np.iinfo(dtype)
    if not info.min <= value <= info.max:
      raise ValueError(
        f"threshold_backward: constant threshold {value} is out of range of {dtype.name}"
      )
    return dict(
      threshold_dtype=dtype.name, threshold_float=np.float64(0.0), threshold_int=np.int64(value)
    )
  # A float32 value is exact in float64; the handler narrows it back without rounding.
  return dict(
    threshold_dtype=dtype.name, threshold_float=np.float64(value), threshold_int=np.int64(0)
  )


def _ffi_rule(target, ctx):
  """jax.ffi's lowering of `target`, with the elementwise Shardy rule when Shardy partitions."""
  rule = None
  if _partitioning.use_shardy():
    rule = _partitioning.sharding_rule([a.shape for a in ctx.avals_in], ctx.avals_out[0].shape)
  extra = None if rule is None else {"sdy.sharding_rule": rule}
  return jax.ffi.ffi_lowering(target, extra_attributes=extra)


def _ffi_lowering(ctx, grad_output, x, threshold, *, implementation, platform, relu_grad=False):
  """Lowers threshold_backward to one XLA FFI custom call (partitioned elementwise on a mesh).

  On CPU, a vmap-batched threshold over a small x runs transposed (batch_transpose.py): the
  kernel launches along the batch axis instead of once per threshold.
  """
  if relu_grad and ctx.avals_in[2].ndim == 0:  # the threshold is 0: no threshold operand
    ctx = ctx.replace(avals_in=ctx.avals_in[:2])
    return _ffi_rule(RELU_GRAD_TARGET, ctx)(ctx, grad_output, x)
  if platform == "cpu" and _batch_transpose.applies(ctx):
    return _batch_transpose.lowering(ctx, grad_output, x, threshold, implementation="ffi")
  del implementation  # already resolved to "ffi" by lowering.py
  threshold_aval = ctx.avals_in[2]
  value = _constant_threshold(threshold, threshold_aval)
  if value is not None:
    ctx = ctx.replace(avals_in=ctx.avals_in[:2])
    return _ffi_rule(STATIC_TARGET, ctx)(
      ctx, grad_output, x, **_static_attributes(value, np.dtype(threshold_aval.dtype))
    )
  return _ffi_rule(TARGET, ctx)(ctx, grad_output, x, threshold)


def _register_types_now() -> None:
  """Makes jax.ffi.register_ffi_type reach XLA at once on CPU.

  XLA refuses a handler whose state type it does not know yet. Registrations made before the CPU
  backend exists wait in jaxlib's xla_client, and its CPU client flushes the waiting targets
  before the waiting types; installing the type handler that client installs (the same
  function: a no-op once installed) registers the types first.
  """
  from jaxlib import xla_client  # noqa: PLC0415

  xla_client.register_custom_type_handler("cpu", xla_client._xla.register_custom_type)


def _register() -> None:
  platforms = set()
  types = _aclnn_ext.ffi_types()
  if types:
    _register_types_now()
  for name, platform, registration in types:
    jax.ffi.register_ffi_type(name, registration, platform=platform)
  for name, platform, capsule in _aclnn_ext.ffi_handlers():
    jax.ffi.register_ffi_target(name, capsule, platform=platform)
    platforms.add(platform)
  _partitioning.register_partitioner(ffi_targets())
  _layout_check.install(ffi_targets())
  for platform in sorted(platforms):
    lowering_platform = _LOWERING_PLATFORM.get(platform)
    if lowering_platform is None:
      continue
    try:
      _lowering.register_lowering_implementation(
        "ffi",
        functools.partial(_ffi_lowering, platform=lowering_platform),
        platform=lowering_platform,
        ffi_targets=ffi_targets(),
        use_for_auto=lowering_platform in _AUTO_PLATFORMS,
      )
    except NotImplementedError:
      # JAX does not know the platform: the NPU build without the Ascend PJRT plugin installed.
      if platform == "cpu":
        raise


_register()
