"""A user's threshold as the primitive's operand, and the exact compare (docs/behaviour.md §1).

`operand(threshold, x_dtype)` is the one conversion: it returns the primitive's 0-d threshold
operand (its dtypes: `_dtypes.threshold_operand_dtypes`) and whether that operand is known at
trace time to be exactly 0 (the primitive's `relu_grad`). For integer x of dtype D the operand is
D holding floor(t), or float32 -inf when every x passes; D(max) lets none pass.

A static threshold (a Python or NumPy number, a Fraction, a Decimal, a 0-d NumPy array) is read as
its exact value (`exact_value`) and rounded once (`round_to`, `clamped_floor`); aclnn.py
hands the executor the results of the same functions. A traced threshold, and the compare
(`threshold_mask`), are array operations that no flush-to-zero / denormals-are-zero mode changes:
XLA's CPU threads set both, and subnormals are numbers on every path. They work on the bits as
integers, or use a float operation only where the modes cannot change its result.
"""

import decimal
import fractions
import functools
import math
import numbers
from typing import Union

import jax
import jax.numpy as jnp
from jax import lax
import numpy as np

from jax_threshold import _dtypes

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_BOOL = "threshold_backward: threshold must be a real number; got a bool"

# --- Static thresholds: exact values ------------------------------------------------------

# A float is exact (a dyadic rational) and the only form of ±inf and NaN.
Exact = Union[int, fractions.Fraction, float]


def _not_real(threshold) -> TypeError:
  return TypeError(
    "threshold_backward: threshold must be a real number; got "
    f"{type(threshold).__name__} {threshold!r}"
  )


def _not_scalar(shape) -> ValueError:
  return ValueError(
    "threshold_backward: threshold must be a scalar (a Python number or a "
    f"0-d array); got an array of shape {tuple(shape)}"
  )


def _numpy_value(value: np.generic) -> Exact:
  dtype = value.dtype
  if dtype.kind in "iu":
    return int(value)
  if dtype.kind not in "cOSUMm":  # NumPy's floats, and ml_dtypes' (kind "V")
    if dtype.itemsize > 8 and np.isfinite(value):  # longdouble: wider than a Python float
      return fractions.Fraction(*value.as_integer_ratio())
    try:
      return float(value)  # exact for every float format up to 64 bits
    except (TypeError, ValueError):
      pass
  raise TypeError(f"threshold_backward: threshold must be a real number; got dtype {dtype.name}")


def exact_value(threshold) -> Exact:
  """The exact value of a static threshold: an int, a Fraction or a float.

  TypeError for a bool or a non-real value, ValueError for an array that is not 0-d.
  """
  if type(threshold) is float or type(threshold) is int:
    return threshold
  if isinstance(threshold, np.ndarray):
    if threshold.shape != ():
      raise _not_scalar(threshold.shape)
    threshold = threshold[()]
  if isinstance(threshold, (bool, np.bool_)):
    raise TypeError(_BOOL)
  if isinstance(threshold, np.generic):
    return _numpy_value(threshold)
  if isinstance(threshold, float):
    return float(threshold)
  if isinstance(threshold, decimal.Decimal):  # not a numbers.Real
    if threshold.is_nan():
      return math.nan
    return fractions.Fraction(threshold) if threshold.is_finite() else float(threshold)
  if isinstance(threshold, numbers.Rational):
    return fractions.Fraction(threshold.numerator, threshold.denominator)
  if isinstance(threshold, numbers.Real):
    ratio = getattr(threshold, "as_integer_ratio", None)
    return fractions.Fraction(*ratio()) if ratio is not None else float(threshold)
  raise _not_real(threshold)


_F32_MIN_NORMAL = 2.0**-126
_F32_MAX = float(np.finfo(np.float32).max)


def round_to(value: Exact, dtype) -> np.ndarray:
  """`value` rounded once, to nearest even, to float32 or float64: a 0-d array of `dtype`.

  Beyond the range ±inf, as IEEE rounding says; exactly 0 gives +0.
  """
  if isinstance(value, int) and abs(value) <= 2**53:
    value = float(value)  # exact
  if isinstance(value, float):
    if value == 0:
      return np.asarray(0.0, dtype)
    if _F32_MIN_NORMAL <= abs(value) <= _F32_MAX or not math.isfinite(value) or dtype == _F64:
      return np.asarray(value, dtype)  # NumPy's one rounding, to a normal float32 (no flush mode)
    value = fractions.Fraction(value)
  if value == 0:
    return np.asarray(0.0, dtype)
  info = np.finfo(dtype)
  sign = -1.0 if value < 0 else 1.0
  a = abs(fractions.Fraction(value))
  # e = floor(log2(a)), exactly: start from the bit lengths, correct by one.
  e = a.numerator.bit_length() - a.denominator.bit_length()
  if a < fractions.Fraction(2) ** e:
    e -= 1
  ulp_exponent = max(e, info.minexp) - info.nmant
  scaled = a / fractions.Fraction(2) ** ulp_exponent
  q, r = divmod(scaled.numerator, scaled.denominator)
  if 2 * r > scaled.denominator or (2 * r == scaled.denominator and q & 1):
    q += 1
  # q <= 2^(nmant + 1), so q * 2^ulp_exponent is exact in a Python float (or out of range).
  if ulp_exponent + q.bit_length() - 1 >= info.maxexp:
    return np.asarray(sign * math.inf, dtype)
  return np.asarray(sign * math.ldexp(float(q), ulp_exponent), dtype)


@functools.cache
def _integer_range(dtype) -> tuple[int, int]:
  info = np.iinfo(dtype)
  return int(info.min), int(info.max)


def clamped_floor(value: Exact, dtype) -> int:
  """floor(value) clamped to [min(D) - 1, max(D) + 1] for integer dtype D (NaN: max(D) + 1).

  For x of dtype D, x > value <=> x > that: below D's range every x passes, above it none.
  """
  low, high = _integer_range(np.dtype(dtype))
  if isinstance(value, float) and not math.isfinite(value):
    return low - 1 if value == -math.inf else high + 1
  return min(max(math.floor(value), low - 1), high + 1)


# --- The threshold operand ----------------------------------------------------------------


def _is_static(threshold) -> bool:
  """Whether the threshold's value is known without tracing (a number, never a jax.Array)."""
  if type(threshold) is float or type(threshold) is int:  # the common call, before the ABCs
    return True
  if isinstance(threshold, jax.Array):  # concrete arrays and tracers alike
    return False
  return isinstance(threshold, (numbers.Number, np.generic, np.ndarray))


def _static_operand(value: Exact, x_dtype: np.dtype) -> tuple[np.ndarray, bool]:
  if x_dtype in _dtypes.NARROW_FLOAT_DTYPES:
    rounded = round_to(value, _F32)
  elif x_dtype == _F64:
    rounded = round_to(value, _F64)
  else:
    k = clamped_floor(value, x_dtype)
    low, high = _integer_range(x_dtype)
    if k < low:
      return np.asarray(-np.inf, _F32), False
    k = min(k, high)
    return np.asarray(k, x_dtype), k == 0
  return rounded, rounded.item() == 0


def _traced_integer_operand(t, x_dtype: np.dtype):
  """An integer threshold of another integer dtype T, for integer x of dtype D."""
  t_info, d_info = np.iinfo(t.dtype), np.iinfo(x_dtype)
  if t_info.min >= d_info.min:
    # Only "too large" can happen: clamp to max(D) (none passes) in T, then cast exactly.
    if t_info.max > d_info.max:
      t = jnp.minimum(t, t.dtype.type(d_info.max))
    return lax.convert_element_type(t, x_dtype)
  # T reaches below min(D), so "every x passes" needs a value D lacks: clamp in T to
  # [min(D) - 1, max(D)] and carry it as a float (|v| <= 2^31 + 1, exact in float64; 8-bit D:
  # |v| <= 2^15, exact in float32). D is never int64 here (no wider T).
  lo, hi = max(d_info.min - 1, t_info.min), min(d_info.max, t_info.max)
  clamped = jnp.clip(t, t.dtype.type(lo), t.dtype.type(hi))
  return lax.convert_element_type(clamped, _F32 if d_info.bits <= 16 else _F64)


def _traced_operand(t, x_dtype: np.dtype):
  if not isinstance(t, jax.Array):
    try:
      t = jnp.asarray(t)
    except (TypeError, ValueError):
      raise _not_real(t) from None
  if t.shape != ():
    raise _not_scalar(t.shape)
  if t.dtype in _dtypes.threshold_operand_dtypes(x_dtype):
    return t  # already an operand: converting it would change nothing but a weak type
  t_dtype = np.dtype(t.dtype)
  if not (_dtypes.is_integer(t_dtype) or _dtypes.is_floating(t_dtype)):
    raise TypeError(
      f"threshold_backward: threshold must be a real number (integer or floating); "
      f"got dtype {t_dtype.name}"
    )
  if _dtypes.is_floating(t_dtype):
    # The flush-proof conversions: a plain one would turn a subnormal threshold into 0 on XLA's
    # CPU threads. Integer x keeps float32 and float64 (compared exactly as reals).
    if x_dtype == _F64:
      return to_float64(t)
    if x_dtype in _dtypes.NARROW_FLOAT_DTYPES or t_dtype not in (_F32, _F64):
      return to_float32(t)
    return t
  if x_dtype in _dtypes.NARROW_FLOAT_DTYPES or x_dtype == _F64:
    return lax.convert_element_type(t, _F32 if x_dtype != _F64 else _F64)
  return _traced_integer_operand(t, x_dtype)


def operand(threshold, x_dtype) -> tuple:
  """(the 0-d threshold operand for x of dtype `x_dtype`, whether it is static and exactly 0).

  A static threshold gives a NumPy value, so a jitted body takes it as an argument (no recompile
  for a new value) and XLA still sees a constant. The flag is the operand's: the comparison that
  runs is with 0 (either sign), so the ReluGrad kernel gives its bits. TypeError for a threshold
  that is not a real number, ValueError for one that is not a scalar.
  """
  x_dtype = np.dtype(x_dtype)
  if _is_static(threshold):
    return _static_operand(exact_value(threshold), x_dtype)
  return _traced_operand(threshold, x_dtype), False


# --- The compare ----------------------------------------------------------------------------

# float dtype -> (same-width signed int, magnitude mask, +inf bits, smallest normal bits)
_INT_OF_FLOAT = {
  _F32: (np.int32, 0x7FFFFFFF, 0x7F800000, 0x00800000),
  _F64: (np.int64, 0x7FFFFFFFFFFFFFFF, 0x7FF0000000000000, 0x0010000000000000),
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

  A float compare is exact in every flush mode when |threshold| is at least the smallest normal,
  ±inf or NaN: a subnormal x read as 0 falls on the same side as 0. Only a zero or subnormal
  threshold needs the integer form; for a constant threshold XLA folds the choice away.
  """
  if np.dtype(x.dtype) == np.dtype(jnp.bfloat16):
    # The range check on x's own 16 bits for every threshold: as cheap as the float compare, and
    # it keeps float arithmetic out of the loop, where XLA's CPU backend would run the bfloat16
    # select in float32 and flush a subnormal gradient on the way back.
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
  - threshold < -0: x passes when b < (threshold's bits), unsigned, and x is not NaN.
  Both are one unsigned range check (b - low) < width.
  """
  int_dtype = _INT_OF_FLOAT[np.dtype(x.dtype)][0]
  uint_dtype = _UINT_OF_INT[np.dtype(int_dtype)]
  t_bits, t_magnitude, inf_bits, _ = _float_bits(threshold)
  zero = jnp.zeros_like(t_bits)
  negative = (t_bits < 0) & (t_magnitude != 0)  # -0 counts as +0
  low = lax.select(negative, zero, t_magnitude + int_dtype(1))
  width = lax.select(negative, t_bits, inf_bits - t_magnitude)
  width = lax.select(t_magnitude > inf_bits, zero, width)  # a NaN threshold: none passes
  bits = lax.bitcast_convert_type(x, int_dtype)
  as_unsigned = lambda v: lax.bitcast_convert_type(v, uint_dtype)
  return (as_unsigned(bits - low) < as_unsigned(width)) & ((x == x) | ~negative)


def _bfloat16_greater_by_bits(x, threshold):
  """`greater_by_bits` for bfloat16 x against a float32 threshold, on x's own 16 bits.

  A bfloat16 with bits b is the float32 with bits b << 16: m < (b << 16) <= (+inf bits) is
  (m >> 16) + 1 <= b <= (+inf bits) >> 16, and (b << 16) < T (unsigned) is b < ceil(T / 2^16).
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
  not_nan = (bits & np.uint16(0x7FFF)) <= np.uint16(0x7F80)
  return ((bits - low) < width) & (not_nan | ~negative)


def to_float32(value):
  """float16 / bfloat16 / float32 / float64 -> float32, rounded once, subnormals kept.

  bfloat16 is the top half of a float32: its bits shift into place. Every float16 subnormal is a
  normal float32. A float64 whose float32 rounding is subnormal is scaled by 2^149 (exact, and
  normal) and rounded to an integer (half to even, exact in float64): the float32's bits.
  """
  dtype = np.dtype(value.dtype)
  if dtype == np.dtype(jnp.bfloat16):
    bits = lax.convert_element_type(lax.bitcast_convert_type(value, np.uint16), np.uint32)
    return lax.bitcast_convert_type(lax.shift_left(bits, np.uint32(16)), np.float32)
  if dtype != _F64:
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
  """Any float dtype -> float64, exactly; a float32 subnormal m * 2^-149 is rebuilt from m."""
  if np.dtype(value.dtype) == _F64:
    return value
  value = to_float32(value)
  bits, magnitude, _, min_normal_bits = _float_bits(value)
  rebuilt = lax.convert_element_type(magnitude, np.float64) * np.float64(2.0**-149)
  rebuilt = lax.select(bits < 0, -rebuilt, rebuilt)
  return lax.select(
    magnitude < min_normal_bits, rebuilt, lax.convert_element_type(value, np.float64)
  )


def integer_threshold(threshold, x_dtype):
  """(k, all_pass, in_range) of a float threshold t for integer x of dtype D, exactly.

  k = floor(t) as D (0 where not in range); all_pass: floor(t) < min(D); in_range:
  min(D) <= floor(t) <= max(D) (False for NaN). Inside the range x > t <=> x > D(k). The bounds
  are powers of two (or 0) and floor(t) an integer or ±inf, so the compares are flush-proof.
  """
  info = np.iinfo(x_dtype)
  bits, magnitude, _, min_normal_bits = _float_bits(threshold)
  # A negative subnormal's floor is -1 (the modes would give -0).
  negative_subnormal = (bits < 0) & (magnitude != 0) & (magnitude < min_normal_bits)
  k = lax.select(negative_subnormal, jnp.full_like(threshold, -1), jnp.floor(threshold))
  lo = np.asarray(info.min, threshold.dtype)
  hi = np.asarray(int(info.max) + 1, threshold.dtype)
  in_range = (k >= lo) & (k < hi)
  k_int = lax.convert_element_type(jnp.where(in_range, k, jnp.zeros_like(k)), x_dtype)
  return k_int, k < lo, in_range


def threshold_mask(x, threshold):
  """The boolean `x > threshold` of docs/behaviour.md §1, for a threshold operand."""
  x_dtype = np.dtype(x.dtype)
  if _dtypes.is_floating(x_dtype):
    return greater(x, threshold)
  if np.dtype(threshold.dtype) == x_dtype:
    return x > threshold
  k, all_pass, in_range = integer_threshold(threshold, x_dtype)
  return all_pass | (in_range & (x > k))
