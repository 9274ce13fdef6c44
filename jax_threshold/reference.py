"""The jnp reference computation of threshold_backward, and its MLIR lowering.

Plain lax/jnp ops only, so XLA fuses it with its neighbours on every platform.
It is the executable form of SPEC section 1 and of the threshold operand
convention documented in `primitive.py`.
"""

import jax.numpy as jnp
from jax import lax
from jax.interpreters import mlir
import numpy as np

from jax_threshold import _dtypes


# The float comparisons below run on the bits as integers: XLA's CPU threads set flush-to-zero /
# denormals-are-zero, which would make a subnormal x (or threshold) 0 in a float comparison, and
# docs/behaviour.md §1 says subnormals are numbers on every path. Integer ops ignore the mode.
_INT_OF_FLOAT = {np.dtype(np.float32): (np.int32, 0x7FFFFFFF, 0x7F800000, 0x00800000),
                 np.dtype(np.float64): (np.int64, 0x7FFFFFFFFFFFFFFF, 0x7FF0000000000000,
                                        0x0010000000000000)}


def _float_bits(value):
  """(signed integer view of the bits, magnitude bits, the dtype's constants)."""
  int_dtype, magnitude_mask, inf_bits, min_normal_bits = _INT_OF_FLOAT[np.dtype(value.dtype)]
  bits = lax.bitcast_convert_type(value, int_dtype)
  magnitude = bits & np.asarray(magnitude_mask, int_dtype)
  return bits, magnitude, np.asarray(inf_bits, int_dtype), np.asarray(min_normal_bits, int_dtype)


def _ordered_key(value):
  """An integer that orders like the float (±0 equal), and whether the float is NaN.

  Non-negative floats order like their bits; a negative one maps to minus its magnitude bits,
  so -0.0 and +0.0 both map to 0 and larger magnitudes go lower.
  """
  bits, magnitude, inf_bits, _ = _float_bits(value)
  key = lax.select(bits < 0, -magnitude, bits)
  return key, magnitude > inf_bits


def _float_greater(x, threshold):
  """x > threshold for floats of one dtype, by value, in any flush mode (NaN: False)."""
  x_key, x_nan = _ordered_key(x)
  t_key, t_nan = _ordered_key(threshold)
  return (x_key > t_key) & ~x_nan & ~t_nan


def _floor(t):
  """floor(t) that a denormals-are-zero mode cannot change: a negative subnormal gives -1."""
  bits, magnitude, _, min_normal_bits = _float_bits(t)
  negative_subnormal = (bits < 0) & (magnitude != 0) & (magnitude < min_normal_bits)
  return lax.select(negative_subnormal, jnp.full_like(t, -1), jnp.floor(t))


def _integer_mask_for_real_threshold(x, threshold):
  """x > t for integer x and a float t, exactly as real numbers.

  With k = floor(t): k < min(D) -> all pass; k >= max(D) + 1 (or NaN) -> none;
  otherwise k is an integer inside D's range, so D(k) is exact and x > t <=> x > D(k).
  min(D) and max(D) + 1 are powers of two (or 0), exact in float32 and float64; k is an
  integer or ±inf (never subnormal), so the comparisons with them are flush-proof.
  """
  info = np.iinfo(x.dtype)
  k = _floor(threshold)
  lo = np.asarray(info.min, threshold.dtype)
  hi = np.asarray(int(info.max) + 1, threshold.dtype)
  all_pass = k < lo
  in_range = (k >= lo) & (k < hi)  # False for NaN and for k >= max(D) + 1
  k_int = lax.convert_element_type(jnp.where(in_range, k, jnp.zeros_like(k)), x.dtype)
  return all_pass | (in_range & (x > k_int))


def threshold_mask(x, threshold):
  """The boolean `x > threshold` of docs/behaviour.md §1, for a canonical threshold operand."""
  x_dtype = np.dtype(x.dtype)
  if x_dtype in _dtypes.NARROW_FLOAT_DTYPES:
    # float16 and bfloat16 widen to float32 exactly; the threshold is already float32.
    return _float_greater(_widen_to_float32(x), threshold)
  if _dtypes.is_floating(x_dtype):
    return _float_greater(x, threshold)
  if np.dtype(threshold.dtype) == x_dtype:
    return x > threshold
  return _integer_mask_for_real_threshold(x, threshold)


def _widen_to_float32(x):
  """float16 / bfloat16 -> float32, exactly, subnormals included.

  bfloat16 is the top half of a float32, so its bits shift into place (a float convert could
  flush a bfloat16 subnormal, which stays subnormal in float32). Every float16 subnormal is a
  normal float32, and the conversion instruction does not consult the flush mode.
  """
  if np.dtype(x.dtype) == np.dtype(jnp.bfloat16):
    bits = lax.convert_element_type(lax.bitcast_convert_type(x, np.uint16), np.uint32)
    return lax.bitcast_convert_type(lax.shift_left(bits, np.uint32(16)), np.float32)
  return lax.convert_element_type(x, np.float32)


def threshold_backward_reference(grad_output, x, threshold, **params):
  """grad_output where x > threshold else 0: a select, so masked inf/NaN become 0."""
  del params  # the implementation name matters only to the lowering dispatch
  mask = threshold_mask(x, threshold)
  shape = jnp.broadcast_shapes(grad_output.shape, mask.shape)
  grad_output = jnp.broadcast_to(grad_output, shape)
  return lax.select(jnp.broadcast_to(mask, shape), grad_output, jnp.zeros_like(grad_output))


reference_lowering = mlir.lower_fun(threshold_backward_reference, multiple_results=False)
