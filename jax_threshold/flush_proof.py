"""Float operations whose result no flush-to-zero / denormals-are-zero mode can change.

XLA's CPU threads run with both modes set, so there a float comparison sees 1e-40f as 0, and a
conversion that produces a subnormal float32 (1.5e-40 from float64) gives 0. docs/behaviour.md
§1 says subnormals are numbers on every path. These helpers work on the bits as integers (integer
ops ignore the modes), or use float compares and arithmetic only where no flush mode can change
the result, and fuse like any elementwise op.
"""

import jax.numpy as jnp
from jax import lax
import numpy as np

# float dtype -> (same-width signed int, magnitude mask, +inf bits, smallest normal bits)
_INT_OF_FLOAT = {
  np.dtype(np.float32): (np.int32, 0x7FFFFFFF, 0x7F800000, 0x00800000),
  np.dtype(np.float64): (np.int64, 0x7FFFFFFFFFFFFFFF, 0x7FF0000000000000, 0x0010000000000000),
}
_UINT_OF_INT = {np.dtype(np.int32): np.dtype(np.uint32), np.dtype(np.int64): np.dtype(np.uint64)}


def _float_bits(value):
  """(signed integer view of the bits, magnitude bits, +inf bits, smallest normal bits)."""
  int_dtype, magnitude_mask, inf_bits, min_normal_bits = _INT_OF_FLOAT[np.dtype(value.dtype)]
  bits = lax.bitcast_convert_type(value, int_dtype)
  magnitude = bits & np.asarray(magnitude_mask, int_dtype)
  return bits, magnitude, np.asarray(inf_bits, int_dtype), np.asarray(min_normal_bits, int_dtype)


def greater(x, threshold):
  """x > threshold by value (NaN: False): float16 / bfloat16 / float32 x against a float32
  threshold, float64 x against a float64 one.

  A float compare is already exact in every flush mode when |threshold| is at least the smallest
  normal, or ±inf, or NaN: a subnormal x, read as 0, falls on the same side as 0 does (so x may
  even be widened by a flushing conversion). Only a zero or subnormal threshold needs the integer
  form. The choice depends on the threshold alone: for a constant threshold XLA folds it away and
  the fused loop runs a single form (for a normal threshold, the same compare as `x > t`).
  """
  if np.dtype(x.dtype) == np.dtype(jnp.bfloat16):
    # One integer range check on x's own 16 bits, for every threshold: as cheap as the float
    # compare, and it keeps float arithmetic out of the loop, where XLA's CPU backend would run
    # the bfloat16 select in float32 and flush a subnormal gradient on the way back.
    return _bfloat16_greater_by_bits(x, threshold)
  _, magnitude, _, min_normal_bits = _float_bits(threshold)
  plain = lax.convert_element_type(x, threshold.dtype) > threshold
  by_bits = greater_by_bits(to_float32(x) if x.dtype != np.float64 else x, threshold)
  return jnp.where(magnitude >= min_normal_bits, plain, by_bits)


def greater_by_bits(x, threshold):
  """x > threshold by value (NaN: False) from the bits as integers, for every threshold.

  With b the bits of x as an unsigned integer and m the magnitude bits of the threshold:
  - threshold >= ±0: x passes when m < b <= (+inf bits), i.e. (b - (m + 1)) < (+inf bits - m)
    unsigned. A negative x or a NaN has b beyond +inf's bits.
  - threshold < -0: x passes when b < (threshold's bits), unsigned (every x >= ±0, and a
    negative x of smaller magnitude), and x is not NaN.
  Both are one unsigned range check (b - low) < width; the NaN test is needed only for a
  negative threshold, so for a constant threshold of ±0 XLA leaves two integer ops.
  """
  int_dtype, _, _, _ = _INT_OF_FLOAT[np.dtype(x.dtype)]
  uint_dtype = _UINT_OF_INT[np.dtype(int_dtype)]
  t_bits, t_magnitude, inf_bits, _ = _float_bits(threshold)
  zero = jnp.zeros_like(t_bits)
  negative = (t_bits < 0) & (t_magnitude != 0)  # -0 counts as +0
  low = lax.select(negative, zero, t_magnitude + int_dtype(1))
  width = lax.select(negative, t_bits, inf_bits - t_magnitude)
  width = lax.select(t_magnitude > inf_bits, zero, width)  # a NaN threshold: none passes
  bits = lax.bitcast_convert_type(x, int_dtype)
  in_range = lax.bitcast_convert_type(bits - low, uint_dtype) < lax.bitcast_convert_type(
    width, uint_dtype
  )
  return in_range & ((x == x) | ~negative)


def _bfloat16_greater_by_bits(x, threshold):
  """`greater_by_bits` for bfloat16 x against a float32 threshold, on x's own 16 bits.

  A bfloat16 with bits b is the float32 with bits b << 16, so each float32 range turns into one
  on b: m < (b << 16) <= (+inf bits) is (m >> 16) + 1 <= b <= (+inf bits) >> 16, and
  (b << 16) < T (unsigned) is b < ceil(T / 2^16). No widening of x; twice the lanes per vector.
  """
  t_bits, t_magnitude, inf_bits, _ = _float_bits(threshold)
  sixteen = np.int32(16)
  zero = jnp.zeros_like(t_bits)
  negative = (t_bits < 0) & (t_magnitude != 0)  # -0 counts as +0
  low_nonnegative = lax.shift_right_logical(t_magnitude, sixteen) + np.int32(1)
  width_nonnegative = lax.shift_right_logical(inf_bits, sixteen) + np.int32(1) - low_nonnegative
  t_unsigned = lax.bitcast_convert_type(t_bits, np.uint32)  # <= 0xFF800000 when not NaN
  width_negative = lax.bitcast_convert_type(
    lax.shift_right_logical(t_unsigned + np.uint32(0xFFFF), np.uint32(16)), np.int32
  )
  low = lax.select(negative, zero, low_nonnegative)
  width = lax.select(negative, width_negative, width_nonnegative)
  width = lax.select(t_magnitude > inf_bits, zero, width)  # a NaN threshold: none passes
  low, width = (lax.convert_element_type(v, np.uint16) for v in (low, width))  # all < 2^16
  bits = lax.bitcast_convert_type(x, np.uint16)
  in_range = (bits - low) < width
  not_nan = (bits & np.uint16(0x7FFF)) <= np.uint16(0x7F80)
  return in_range & (not_nan | ~negative)


def floor(t):
  """floor(t) for float32 / float64: a negative subnormal gives -1 (the modes would give -0)."""
  bits, magnitude, _, min_normal_bits = _float_bits(t)
  negative_subnormal = (bits < 0) & (magnitude != 0) & (magnitude < min_normal_bits)
  return lax.select(negative_subnormal, jnp.full_like(t, -1), jnp.floor(t))


def to_float32(value):
  """float16 / bfloat16 / float32 / float64 -> float32, rounded once, subnormals kept.

  bfloat16 is the top half of a float32, so its bits shift into place. Every float16 subnormal
  is a normal float32 (and the conversion instruction ignores the modes). A float64 whose
  float32 rounding is subnormal is scaled by 2^149 (exact, and normal), rounded to an integer
  (half to even, exact in float64): that integer is the float32's bits.
  """
  dtype = np.dtype(value.dtype)
  if dtype == np.dtype(jnp.bfloat16):
    bits = lax.convert_element_type(lax.bitcast_convert_type(value, np.uint16), np.uint32)
    return lax.bitcast_convert_type(lax.shift_left(bits, np.uint32(16)), np.float32)
  if dtype != np.dtype(np.float64):
    return lax.convert_element_type(value, np.float32)
  magnitude = jnp.abs(value)
  small = magnitude < np.float64(2.0**-126)  # False for NaN
  scaled = lax.round(magnitude * np.float64(2.0**149), lax.RoundingMethod.TO_NEAREST_EVEN)
  subnormal_bits = lax.convert_element_type(jnp.where(small, scaled, 0.0), np.int32)
  sign = lax.convert_element_type(
    lax.shift_right_logical(lax.bitcast_convert_type(value, np.uint64), np.uint64(63)), np.int32
  )
  subnormal = lax.bitcast_convert_type(
    subnormal_bits | lax.shift_left(sign, np.int32(31)), np.float32
  )
  return lax.select(small, subnormal, lax.convert_element_type(value, np.float32))


def to_float64(value):
  """Any float dtype -> float64, exactly, subnormals kept.

  A float32 subnormal m * 2^-149 (DAZ would read it as 0) is rebuilt from its integer m.
  """
  dtype = np.dtype(value.dtype)
  if dtype == np.dtype(np.float64):
    return value
  value = to_float32(value)
  bits, magnitude, _, min_normal_bits = _float_bits(value)
  rebuilt = lax.convert_element_type(magnitude, np.float64) * np.float64(2.0**-149)
  rebuilt = lax.select(bits < 0, -rebuilt, rebuilt)
  return lax.select(
    magnitude < min_normal_bits, rebuilt, lax.convert_element_type(value, np.float64)
  )
