"""The public functions: `threshold_backward` and the `threshold` activation.

Both check their operands once, before anything is traced (TypeError for dtypes, ValueError for
shapes and names), turn the threshold into the primitive's operand and bind the primitive.
"""

import decimal
import fractions
import functools
from typing import Union

import jax
import jax.numpy as jnp
from jax import lax
from jax.typing import ArrayLike
import numpy as np

from jax_threshold import _dtypes
from jax_threshold import _threshold
from jax_threshold import lowering as _lowering
from jax_threshold._shapes import broadcast_shapes
from jax_threshold.primitive import explicit_output_sharding
from jax_threshold.primitive import match_varying_axes
from jax_threshold.primitive import threshold_backward_p

# A threshold (or the forward's replacement value): any real number a user can write, exactly
# (a Python int of any size, a float, a Fraction, a Decimal, a NumPy scalar, a 0-d array).
RealLike = Union[ArrayLike, fractions.Fraction, decimal.Decimal]

# The forward's compare as one named step: a printed jaxpr shows `threshold_mask` instead of the
# bit manipulation that keeps it exact for subnormals. XLA inlines the call, so the fused program
# is the same as without it.
threshold_mask = jax.jit(_threshold.threshold_mask)


def _common_dtype(grad_output, x) -> np.dtype | None:
  """The dtype both operands are converted to, or None to leave them as they are.

  A weakly typed operand (a Python scalar, a weak_type array) takes the other's dtype where
  JAX's promotion (as in jnp.where) gives that dtype; two weak ones take their promoted dtype.
  Anything else is left for the dtype check to report. Reads the operands' types only, so it
  runs before the call, without copying them."""
  g_type, x_type = jax.typeof(grad_output), jax.typeof(x)
  if g_type.dtype == x_type.dtype:
    return None
  g_weak, x_weak = g_type.weak_type, x_type.weak_type
  if not (g_weak or x_weak):
    return None
  promoted = np.dtype(jnp.result_type(grad_output, x))
  if g_weak and x_weak:
    return promoted
  target = np.dtype(x_type.dtype if g_weak else g_type.dtype)
  if promoted != target:  # e.g. a Python float against integer x: JAX gives a float
    _dtypes.check_supported(g_type.dtype, "grad_output")
    _dtypes.check_supported(x_type.dtype, "x")
    weak, strong = ("grad_output", "x") if g_weak else ("x", "grad_output")
    raise TypeError(
      f"threshold_backward: the weakly typed {weak} ({promoted.name}) does not "
      f"take {strong}'s dtype {target.name}: JAX promotes the pair to "
      f"{promoted.name}; pass {weak} as an array of dtype {target.name}"
    )
  return target


def _checked_dtype(grad_output, x) -> tuple[np.dtype, bool]:
  """The dtype the primitive binds grad_output and x with, and whether either is converted to
  it (a weakly typed one); TypeError / ValueError (naming the dtypes, the shapes) for a pair it
  does not take. The call's one check of its operands, made before anything is traced."""
  g_dtype = getattr(grad_output, "dtype", None)
  if g_dtype in _dtypes.CANONICAL_DTYPES and g_dtype == getattr(x, "dtype", None):
    if grad_output.shape == x.shape:  # the common call, decided without the types
      return np.dtype(g_dtype), False
  target = _common_dtype(grad_output, x)
  g_type, x_type = jax.typeof(grad_output), jax.typeof(x)
  if target is None:
    dtype = _dtypes.check_same_dtype(g_type.dtype, x_type.dtype)
  else:
    dtype = _dtypes.check_same_dtype(target, target)
  if g_type.shape != x_type.shape:
    broadcast_shapes(g_type.shape, x_type.shape)
  return dtype, target is not None


# Arguments the jitted bodies take as they are: jax.Arrays, NumPy arrays and scalars of a dtype
# jit takes (transferred by jit's own dispatch, never copied eagerly, so jax.debug_nans sees only
# the result), and Python numbers (weakly typed, as jnp.asarray makes them). Anything else goes
# through jnp.asarray first, with its errors.
_JIT_DTYPES = frozenset(
  np.dtype(d)
  for d in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32)
  + (np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128, jnp.bfloat16)
)
_PYTHON_NUMBERS = (bool, int, float, complex)


def _takes_as_argument(value) -> bool:
  if isinstance(value, jax.Array) or type(value) in _PYTHON_NUMBERS:
    return True
  return isinstance(value, (np.ndarray, np.generic)) and value.dtype in _JIT_DTYPES


def _as_operand(value):
  return value if _takes_as_argument(value) else jnp.asarray(value)


def threshold_backward(
  grad_output: ArrayLike, x: ArrayLike, threshold: RealLike, *, implementation: str | None = None
) -> jax.Array:
  """`grad_output` where `x > threshold`, else 0 (exactly 0, even for inf/NaN grads).

  The gradient of `threshold(x, threshold, value)` with respect to `x`, and of
  `torch.nn.functional.threshold` / CANN's `aclnnThresholdBackward`
  (docs/behaviour.md §1).

  Args:
    grad_output: array, the incoming gradient; broadcasts against `x` (NumPy rules).
    x: array of the same dtype, the forward input. Supported dtypes: float32,
      float16, bfloat16, int32, int8, uint8, and int64/float64 under x64.
      A weakly typed operand (a Python scalar, or a JAX array with
      `weak_type=True`) takes the other's dtype, as in `jnp.where`.
    threshold: a real scalar — a Python int (any size), float, Fraction or
      Decimal, a NumPy scalar, or a 0-d array, traced or not. float16/bfloat16/
      float32 `x` compare in float32 against the threshold rounded once;
      float64 in float64; integers exactly as reals (`x > 2.5` is `x >= 3`).
      A NaN `x` never passes; subnormals are compared as the numbers they are.
    implementation: None (the current default, see `jax_threshold.implementation`),
      "auto", "reference" or "ffi".

  Returns:
    An array of the broadcast shape of `grad_output` and `x`, with their dtype.

  Raises:
    TypeError: a dtype outside the supported list, `grad_output` and `x` of
      different dtypes (both strongly typed, or a weak one JAX would not
      promote to the other's dtype, e.g. a Python float for integer `x`), or
      a threshold that is not a real number (a bool, a complex number, a string).
    ValueError: shapes that do not broadcast, a non-scalar threshold, an
      unknown or unavailable implementation name.

  Example:
    >>> import jax.numpy as jnp, jax_threshold as jt
    >>> jt.threshold_backward(jnp.array([4.5, 4.4, 4.3, 4.2]),
    ...                       jnp.array([0.2, 1.2, 2.2, 3.2]), 1.0)
    Array([0. , 4.4, 4.3, 4.2], dtype=float32)
  """
  implementation = _lowering.resolve(implementation)
  grad_output, x = _as_operand(grad_output), _as_operand(x)
  dtype, convert = _checked_dtype(grad_output, x)
  threshold, relu_grad = _threshold.operand(threshold, dtype)
  return _threshold_backward(
    grad_output,
    x,
    threshold,
    implementation=implementation,
    convert_to=dtype if convert else None,
    relu_grad=relu_grad,
  )


# Inlined while tracing: a caller's jaxpr holds the same equations as binding there would (jax
# 0.12 names that jax.Inline.JAX_EARLY, where True inlines only when lowering; 0.10's True).
_INLINE_WHILE_TRACING = getattr(getattr(jax, "Inline", None), "JAX_EARLY", True)


# The bind, inside jit's cached dispatch: an eager call with arrays of a known type takes jit's
# C++ path, and a traced one sees the primitive's equations (see above). The operands arrive
# checked and the threshold as the primitive's operand; a static one as a NumPy value, so a new
# value reuses the compiled body.
@functools.partial(
  jax.jit,
  static_argnames=("implementation", "convert_to", "relu_grad"),
  inline=_INLINE_WHILE_TRACING,
)
def _threshold_backward(grad_output, x, threshold, *, implementation, convert_to, relu_grad):
  if convert_to is not None:
    grad_output = lax.convert_element_type(grad_output, convert_to)
    x = lax.convert_element_type(x, convert_to)
  grad_output, x, threshold = match_varying_axes(grad_output, x, threshold)
  return threshold_backward_p.bind(
    grad_output, x, threshold, implementation=implementation, relu_grad=relu_grad
  )


def _check_static_value(value, dtype):
  if dtype.kind in "iu" and isinstance(value, (int, float, np.number)):  # integer x (np.dtype)
    # A static value must fit x's integer type (float -> int conversion of an
    # out-of-range value differs between NumPy and XLA); it is truncated toward 0.
    info = np.iinfo(dtype)
    if not (info.min <= value <= info.max):  # False for NaN too
      raise ValueError(f"threshold: value {value!r} does not fit x's dtype {dtype.name}")


def _value_argument(value):
  """The replacement value as an argument of the jitted body (see `_as_operand`)."""
  try:
    return _as_operand(value)
  except (TypeError, ValueError):
    raise TypeError(
      "threshold: value must be a real number (a Python number or a 0-d "
      f"array); got {type(value).__name__} {value!r}"
    ) from None


def _scalar_value(value, dtype):
  """The replacement value (an argument of the jitted body) as a scalar of x's dtype."""
  if value.ndim:
    raise ValueError(
      "threshold: value must be a scalar (a Python number or a 0-d array); "
      f"got an array of shape {value.shape}"
    )
  if value.dtype == np.bool_ or jnp.issubdtype(value.dtype, jnp.complexfloating):
    raise TypeError(f"threshold: value must be a real number; got dtype {value.dtype}")
  return lax.convert_element_type(value, dtype)


def _select(mask, x, value):
  # On a mesh with Explicit axes the cases take the mask's sharding (None elsewhere).
  sharding = explicit_output_sharding([jax.typeof(mask)])
  return lax.select(
    mask,
    jnp.broadcast_to(x, mask.shape, out_sharding=sharding),
    jnp.broadcast_to(value, mask.shape, out_sharding=sharding),
  )


@functools.partial(jax.custom_jvp, nondiff_argnums=(3, 4))
def _threshold_activation(x, threshold, value, implementation, relu_grad):
  del implementation, relu_grad  # the forward is plain jnp; they pick the backward's lowering
  return _select(threshold_mask(x, threshold), x, value)


# symbolic_zeros: the rule sees which inputs get no gradient. A constant value then needs no
# select, so the linearized backward keeps x (the primitive's operand) and not the mask as well.
@functools.partial(_threshold_activation.defjvp, symbolic_zeros=True)
def _threshold_activation_jvp(implementation, relu_grad, primals, tangents):
  x, threshold, value = primals
  x_dot, _, value_dot = tangents  # the threshold gets no gradient
  mask = threshold_mask(x, threshold)
  out = _select(mask, x, value)
  # d/dx through the primitive (so every order of derivative runs through it); it is exactly 0
  # where x does not pass, the same bits the select below would put there for a zero value
  # tangent. d/dvalue is 1 exactly where x does not pass.
  if isinstance(x_dot, jax.custom_derivatives.SymbolicZero):
    x_part = jax.custom_derivatives.zero_from_primal(out)
  else:
    x_part = threshold_backward_p.bind(
      x_dot, x, threshold, implementation=implementation, relu_grad=relu_grad
    )
  if isinstance(value_dot, jax.custom_derivatives.SymbolicZero):
    return out, x_part
  return out, _select(mask, x_part, value_dot)


def threshold(
  x: ArrayLike,
  threshold: RealLike,  # pylint: disable=redefined-outer-name
  value: RealLike,
  *,
  implementation: str | None = None,
) -> jax.Array:
  """`x if x > threshold else value`, elementwise, like torch.nn.functional.threshold.

  Args:
    x: array of a supported dtype (see `threshold_backward`).
    threshold: a real scalar, traced or not; compared exactly as in
      `threshold_backward` (same precision rules).
    value: a real scalar that replaces the elements at or below `threshold`;
      cast to x's dtype (a static value must fit an integer x's dtype).
    implementation: which lowering the gradient uses (see `threshold_backward`).

  Returns:
    An array of x's shape and dtype. Its gradient w.r.t. `x` is
    `threshold_backward(g, x, threshold)` (through the primitive, at every
    order); w.r.t. `value` the sum of `g` where `x` does not pass; `threshold`
    gets none.

  Raises:
    TypeError: an unsupported dtype, a non-real threshold or value.
    ValueError: a non-scalar threshold or value, a static value outside an
      integer x's range, an unknown or unavailable implementation name.

  Example:
    >>> import jax, jax.numpy as jnp, jax_threshold as jt
    >>> jax.grad(lambda x: jt.threshold(x, 1.0, 0.0).sum())(jnp.array([0.5, 2.0]))
    Array([0., 1.], dtype=float32)
  """
  implementation = _lowering.resolve(implementation)
  x = _as_operand(x)
  dtype = getattr(x, "dtype", None)
  if dtype not in _dtypes.CANONICAL_DTYPES:
    dtype = _dtypes.check_supported(jax.typeof(x).dtype, "x")
  threshold, relu_grad = _threshold.operand(threshold, dtype)
  _check_static_value(value, dtype)
  return _threshold_forward(
    x, threshold, _value_argument(value), implementation=implementation, relu_grad=relu_grad
  )


# As `_threshold_backward`: the trace-time work inside jit's cached dispatch.
@functools.partial(
  jax.jit,
  static_argnames=("implementation", "relu_grad"),
  inline=_INLINE_WHILE_TRACING,
)
def _threshold_forward(x, threshold, value, *, implementation, relu_grad):
  dtype = np.dtype(x.dtype)
  value = _scalar_value(value, dtype)
  x, threshold, value = match_varying_axes(x, threshold, value)
  if _dtypes.is_integer(dtype):  # not differentiable: no custom rule needed
    return _select(threshold_mask(x, threshold), x, value)
  return _threshold_activation(x, threshold, value, implementation, relu_grad)
