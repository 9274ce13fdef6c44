"""The public functions: `threshold_backward` and the `threshold` activation.

Both validate at trace time (TypeError for dtypes, ValueError for shapes and
names), turn the threshold into the primitive's operand and bind the primitive.
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
from jax_threshold._threshold import canonicalize_threshold
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


def _common_dtype(grad_output: jax.Array, x: jax.Array) -> tuple[jax.Array, jax.Array]:
  """A weakly typed operand (a Python scalar, a weak_type array) takes the other's dtype where
  JAX's promotion (as in jnp.where) gives that dtype; two weak ones take their promoted dtype.
  Anything else is left for the dtype check to report."""
  if grad_output.dtype == x.dtype:
    return grad_output, x
  g_weak, x_weak = jax.typeof(grad_output).weak_type, jax.typeof(x).weak_type
  if not (g_weak or x_weak):
    return grad_output, x
  promoted = np.dtype(jnp.result_type(grad_output, x))
  if g_weak and x_weak:
    target = promoted
  else:
    target = np.dtype(x.dtype if g_weak else grad_output.dtype)
    if promoted != target:  # e.g. a Python float against integer x: JAX gives a float
      _dtypes.check_supported(grad_output.dtype, "grad_output")
      _dtypes.check_supported(x.dtype, "x")
      weak, strong = ("grad_output", "x") if g_weak else ("x", "grad_output")
      raise TypeError(
        f"threshold_backward: the weakly typed {weak} ({promoted.name}) does not "
        f"take {strong}'s dtype {target.name}: JAX promotes the pair to "
        f"{promoted.name}; pass {weak} as an array of dtype {target.name}"
      )
  return (lax.convert_element_type(grad_output, target), lax.convert_element_type(x, target))


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
  grad_output, x = _common_dtype(jnp.asarray(grad_output), jnp.asarray(x))
  dtype = _dtypes.check_same_dtype(grad_output.dtype, x.dtype)
  broadcast_shapes(grad_output.shape, x.shape)
  threshold = canonicalize_threshold(threshold, dtype)
  grad_output, x, threshold = match_varying_axes(grad_output, x, threshold)
  return threshold_backward_p.bind(
    grad_output, x, threshold, implementation=implementation, relu_grad=_is_static_zero(threshold)
  )


def _is_static_zero(threshold) -> bool:
  """Whether the threshold operand is known now (not traced) to be exactly 0, either sign."""
  if isinstance(threshold, jax.core.Tracer):
    return False
  try:
    return bool(np.asarray(threshold) == 0)
  except (TypeError, ValueError):  # an operand NumPy cannot hold: no kernel choice
    return False


def _scalar_value(value, dtype):
  if _dtypes.is_integer(dtype) and isinstance(value, (int, float, np.number)):
    # A static value must fit x's integer type (float -> int conversion of an
    # out-of-range value differs between NumPy and XLA); it is truncated toward 0.
    info = np.iinfo(dtype)
    if not (info.min <= value <= info.max):  # False for NaN too
      raise ValueError(f"threshold: value {value!r} does not fit x's dtype {dtype.name}")
  try:
    value = jnp.asarray(value)
  except (TypeError, ValueError):
    raise TypeError(
      "threshold: value must be a real number (a Python number or a 0-d "
      f"array); got {type(value).__name__} {value!r}"
    ) from None
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


@functools.partial(jax.custom_jvp, nondiff_argnums=(3,))
def _threshold_activation(x, threshold, value, implementation):
  del implementation  # the forward is plain jnp; the name picks the backward's lowering
  return _select(threshold_mask(x, threshold), x, value)


@_threshold_activation.defjvp
def _threshold_activation_jvp(implementation, primals, tangents):
  x, threshold, value = primals
  x_dot, _, value_dot = tangents  # the threshold gets no gradient
  mask = threshold_mask(x, threshold)
  out = _select(mask, x, value)
  # d/dx through the primitive (so every order of derivative runs through it);
  # d/dvalue is 1 exactly where x does not pass.
  x_part = threshold_backward_p.bind(
    x_dot, x, threshold, implementation=implementation, relu_grad=_is_static_zero(threshold)
  )
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
  x = jnp.asarray(x)
  dtype = _dtypes.check_supported(x.dtype, "x")
  threshold = canonicalize_threshold(threshold, dtype)
  value = _scalar_value(value, dtype)
  x, threshold, value = match_varying_axes(x, threshold, value)
  if _dtypes.is_integer(dtype):  # not differentiable: no custom rule needed
    return _select(threshold_mask(x, threshold), x, value)
  return _threshold_activation(x, threshold, value, implementation)
