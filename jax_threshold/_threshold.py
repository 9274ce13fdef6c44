"""A user's threshold, as the primitive's operand, and the exact compare (docs/behaviour.md §1).

The threshold is an operand of the primitive (never a static param), so a jitted function that
takes it as an argument does not recompile when its value changes, and `vmap` can batch it. Its
dtype follows from x's dtype (`_dtypes.threshold_operand_dtypes`):

  x float16 / bfloat16 / float32 -> float32, the threshold rounded ONCE to float32
  x float64                      -> float64
  x integer of dtype D           -> D, or float32 / float64 holding a real t compared exactly:
                                    with k = floor(t), k < min(D): every x passes; k >= max(D)
                                    or t NaN: none passes; else x > D(k).

Static thresholds (also the executor's Python face, aclnn.py) go through their exact value:

  exact_value(t)   any real number a user can write -- an int of any size, a float, a
                   fractions.Fraction (any numbers.Rational), a decimal.Decimal, a NumPy scalar
                   (float16, bfloat16, longdouble, ...), a 0-d array -- as its exact value: a
                   Fraction, or a float for +-inf and NaN. Bools are refused (TypeError).
  round_to_float(v, fmt)  that value rounded once, to nearest even, to float32 or float64
                   (beyond the range: +-inf, as IEEE rounding says). Never via float64 first.
  integer_comparison(v, dtype)  for integer x: x > v <=> x > floor(v), decided exactly and
                   clamped to the dtype's range ("all_pass" / "none_pass" / ("compare", k)).

Fraction arithmetic keeps every step exact; the one rounding is the last step. For integer x the
operand is floor(t) clamped into D, with float32(-inf) standing for "below min(D)" (every x
passes) and D(max) for "at or above max(D)" (none passes). So `x > 16777216.5` is exact for int32,
and uint8 with threshold -1 lets everything pass.

Traced thresholds and the compare itself run as array operations that no flush-to-zero /
denormals-are-zero mode can change: XLA's CPU threads set both, so there a float comparison sees
1e-40f as 0 and a conversion that produces a subnormal float32 gives 0, while subnormals are
numbers on every path. These helpers work on the bits as integers (integer ops ignore the modes),
or use float compares and arithmetic only where no flush mode can change the result, and fuse like
any elementwise op. `threshold_mask` is the compare of every jnp path.
"""

import decimal
import fractions
import math
import numbers
from typing import NamedTuple, Union

import jax
import jax.numpy as jnp
from jax import lax
import numpy as np

from jax_threshold import _dtypes

# --- Exact values of static thresholds ---------------------------------------------------

Exact = Union[fractions.Fraction, float]  # a float only for +-inf and NaN

_BOOL_MESSAGE = "threshold_backward: threshold must be a real number; got a bool"


def _not_real(threshold) -> TypeError:
  return TypeError(
    "threshold_backward: threshold must be a real number; got "
    f"{type(threshold).__name__} {threshold!r}"
  )


def _from_float(value: float) -> Exact:
  return value if not math.isfinite(value) else fractions.Fraction(value)


def _from_numpy(value: np.generic) -> Exact:
  dtype = value.dtype
  if dtype == np.bool_:
    raise TypeError(_BOOL_MESSAGE)
  if dtype.kind in "iu":
    return fractions.Fraction(int(value))
  if dtype.kind in "cOSUMm":
    raise TypeError(f"threshold_backward: threshold must be a real number; got dtype {dtype.name}")
  # A floating dtype: NumPy's own or ml_dtypes' (bfloat16, float8_*), whose kind is "V".
  if dtype.itemsize > 8:  # longdouble: wider than a Python float, exact via its ratio
    if not np.isfinite(value):
      return float(value)
    return fractions.Fraction(*value.as_integer_ratio())
  try:
    return _from_float(float(value))  # widening to float64 is exact for these formats
  except (TypeError, ValueError):
    raise TypeError(
      f"threshold_backward: threshold must be a real number; got dtype {dtype.name}"
    ) from None


def _from_decimal(value: decimal.Decimal) -> Exact:
  if value.is_nan():
    return math.nan
  if value.is_infinite():
    return -math.inf if value.is_signed() else math.inf
  return fractions.Fraction(value)


def exact_value(threshold) -> Exact:
  """The exact value of a static threshold (see the module docstring).

  TypeError for a bool or a non-real value, ValueError for an array that is not 0-d.
  """
  if isinstance(threshold, (bool, np.bool_)):
    raise TypeError(_BOOL_MESSAGE)
  if isinstance(threshold, np.ndarray):
    if threshold.shape != ():
      raise ValueError(
        "threshold_backward: threshold must be a scalar (a Python number or a "
        f"0-d array); got an array of shape {threshold.shape}"
      )
    threshold = threshold[()]
  if isinstance(threshold, np.generic):
    return _from_numpy(threshold)
  if isinstance(threshold, decimal.Decimal):  # not registered as numbers.Real
    return _from_decimal(threshold)
  if isinstance(threshold, numbers.Rational):  # int (any size), Fraction
    return fractions.Fraction(threshold.numerator, threshold.denominator)
  if isinstance(threshold, float):
    return _from_float(threshold)
  if isinstance(threshold, numbers.Real):
    ratio = getattr(threshold, "as_integer_ratio", None)
    if ratio is not None:
      return fractions.Fraction(*ratio())
    return _from_float(float(threshold))  # the only exact view such a type offers
  raise _not_real(threshold)


class FloatFormat(NamedTuple):
  precision: int  # significand bits, the implicit one included
  min_exponent: int  # exponent of the smallest normal number
  max_exponent: int  # exponent of the largest finite number


FLOAT32 = FloatFormat(24, -126, 127)
FLOAT64 = FloatFormat(53, -1022, 1023)


def round_to_float(value: Exact, fmt: FloatFormat) -> float:
  """`value` rounded once, to nearest even, to `fmt`; returned as a (exact) Python float."""
  if isinstance(value, float):  # inf or NaN
    return value
  if value == 0:
    return 0.0
  sign = -1.0 if value < 0 else 1.0
  a = abs(value)
  # e = floor(log2(a)), exactly: start from the bit lengths, correct by one.
  e = a.numerator.bit_length() - a.denominator.bit_length()
  if a < fractions.Fraction(2) ** e:
    e -= 1
  ulp_exponent = max(e, fmt.min_exponent) - (fmt.precision - 1)
  scaled = a / fractions.Fraction(2) ** ulp_exponent
  q, r = divmod(scaled.numerator, scaled.denominator)
  twice = 2 * r
  if twice > scaled.denominator or (twice == scaled.denominator and q & 1):
    q += 1
  # q <= 2^precision, so q * 2^ulp_exponent is exact in a Python float (or out of range).
  if ulp_exponent + q.bit_length() - 1 > fmt.max_exponent:
    return sign * math.inf
  return sign * math.ldexp(float(q), ulp_exponent)


ALL_PASS = "all_pass"
NONE_PASS = "none_pass"
COMPARE = "compare"


def integer_comparison(value: Exact, dtype) -> tuple[str, int]:
  """For x of integer dtype: (COMPARE, k) with x > value <=> x > k and k in the dtype's range,
  or (ALL_PASS, 0) / (NONE_PASS, 0) when floor(value) lies below / above the range (or value is
  NaN). k == max(dtype) is a COMPARE that nothing passes."""
  info = np.iinfo(dtype)
  if isinstance(value, float):  # inf or NaN
    return (ALL_PASS, 0) if value == -math.inf else (NONE_PASS, 0)
  k = math.floor(value)
  if k < info.min:
    return ALL_PASS, 0
  if k > info.max:
    return NONE_PASS, 0
  return COMPARE, k


def is_exactly_zero(value: Exact) -> bool:
  """docs/behaviour.md §2 step 8: the threshold as given is 0 (either sign); not NaN."""
  return not isinstance(value, float) and value == 0


# --- Flush-proof float operations ---------------------------------------------------------

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


# --- The threshold operand ----------------------------------------------------------------

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


def is_static(threshold) -> bool:
  """Whether the threshold's value is known without tracing (a number, never a jax.Array)."""
  if type(threshold) is float or type(threshold) is int:  # the common call, before the ABCs
    return True
  if isinstance(threshold, jax.Array):  # concrete arrays and tracers alike
    return False
  return isinstance(threshold, (numbers.Number, np.generic, np.ndarray))


def is_known_zero(operand) -> bool:
  """Whether a threshold operand is static and exactly 0 (either sign): the primitive's
  `relu_grad` flag. A traced one is never known, so its value never chooses a compiled plan."""
  return isinstance(operand, np.ndarray) and operand.item() == 0


def _check_scalar_shape(shape):
  if tuple(shape) != ():
    raise ValueError(
      "threshold_backward: threshold must be a scalar (a Python number or a "
      f"0-d array); got an array of shape {tuple(shape)}"
    )


def _check_real_dtype(dtype):
  dtype = np.dtype(dtype)
  if dtype == np.bool_ or not (_dtypes.is_integer(dtype) or _dtypes.is_floating(dtype)):
    raise TypeError(
      "threshold_backward: threshold must be a real number (integer or "
      f"floating); got dtype {dtype.name}"
    )
  if _dtypes.is_floating(dtype) and dtype.itemsize > 8:
    raise TypeError(
      f"threshold_backward: threshold dtype {dtype.name} is wider than float64 and is not supported"
    )
  return dtype


_F32_MIN_NORMAL = 2.0**-126
_F32_MAX = float(np.finfo(np.float32).max)
_EXACT_INT_IN_FLOAT = 2**53  # every int of at most this magnitude is exact as a Python float


def _python_number_operand(threshold, x_dtype: np.dtype) -> np.ndarray | None:
  """The operand of a Python float or int without Fractions, where that is the same operand;
  None elsewhere.

  A Python float is a float64, so NumPy's one conversion to float32 (to nearest even) is the
  exact value rounded once; kept to float32's normal range, where no overflow and no flush mode
  can touch it. Zero of either sign is +0, as `round_to_float` gives. An int is taken where it is
  exact as a float.
  """
  kind = type(threshold)  # exactly: a bool (an int subclass) is refused by exact_value
  if kind is int:
    if not -_EXACT_INT_IN_FLOAT <= threshold <= _EXACT_INT_IN_FLOAT:
      return None
    value = float(threshold)
  elif kind is float:
    value = threshold
  else:
    return None
  if x_dtype in _dtypes.NARROW_FLOAT_DTYPES:
    magnitude = abs(value)
    if value == 0:
      return np.asarray(0.0, _F32)
    if _F32_MIN_NORMAL <= magnitude <= _F32_MAX or not math.isfinite(value):
      return np.asarray(value, _F32)
    return None
  if x_dtype == _F64:
    return np.asarray(value if value != 0 else 0.0, _F64)
  if not _dtypes.is_integer(x_dtype):
    return None
  # Integer x: floor of a finite float is exact; inf and NaN keep their meaning.
  return _integer_operand(math.floor(value) if math.isfinite(value) else value, x_dtype)


def _integer_operand(value, x_dtype: np.dtype) -> np.ndarray:
  mode, k = integer_comparison(value, x_dtype)
  if mode == ALL_PASS:
    return np.asarray(-np.inf, _F32)
  if mode == NONE_PASS:
    return np.asarray(np.iinfo(x_dtype).max, x_dtype)
  return np.asarray(k, x_dtype)


def _static_operand(threshold, x_dtype: np.dtype) -> np.ndarray:
  """The operand of a static threshold, from its exact value (py)."""
  operand = _python_number_operand(threshold, x_dtype)
  if operand is not None:
    return operand
  value = exact_value(threshold)
  if x_dtype in _dtypes.NARROW_FLOAT_DTYPES:
    return np.asarray(round_to_float(value, FLOAT32), _F32)
  if x_dtype == _F64:
    return np.asarray(round_to_float(value, FLOAT64), _F64)
  # Integer x: decided exactly with k = floor(t).
  return _integer_operand(value, x_dtype)


def _traced_integer_operand(t, t_dtype: np.dtype, x_dtype: np.dtype):
  """An integer threshold of another integer dtype, for integer x of dtype D."""
  t_info, d_info = np.iinfo(t_dtype), np.iinfo(x_dtype)
  if t_info.min >= d_info.min and t_info.max <= d_info.max:
    return lax.convert_element_type(t, x_dtype)  # T's range fits in D: exact
  if t_info.min >= d_info.min:
    # Only "too large" can happen; t >= max(D) and max(D) both mean "none passes",
    # and max(D) < max(T) is representable in T, so clamp in T, then cast exactly.
    return lax.convert_element_type(jnp.minimum(t, t.dtype.type(d_info.max)), x_dtype)
  # T reaches below min(D) (T signed and wider, or int8 vs uint8), so "every x passes"
  # needs a value D lacks. Clamp in T to [min(D) - 1, max(D)] (both in T's range) and
  # carry it as a float: these integers have |v| <= 2^31 + 1, exact in float64, and
  # |v| <= 2^15 for 8-bit D, exact in float32. D is never int64 here (no wider T).
  lo = max(d_info.min - 1, t_info.min)
  hi = min(d_info.max, t_info.max)
  clamped = jnp.clip(t, t.dtype.type(lo), t.dtype.type(hi))
  float_dtype = _F32 if d_info.bits <= 16 else _F64
  return lax.convert_element_type(clamped, float_dtype)


def _traced_operand(t, x_dtype: np.dtype):
  if not isinstance(t, jax.Array):
    try:
      t = jnp.asarray(t)
    except (TypeError, ValueError):
      raise _not_real(t) from None
  if t.shape == () and t.dtype in _dtypes.threshold_operand_dtypes(x_dtype):
    return t  # already an operand: converting it would change nothing but a weak type
  _check_scalar_shape(t.shape)
  t_dtype = _check_real_dtype(t.dtype)
  # Float conversions go through the flush-proof helpers: on XLA's CPU threads (flush-to-zero and
  # denormals-are-zero set) a plain conversion would turn a subnormal threshold into 0.
  if x_dtype in _dtypes.NARROW_FLOAT_DTYPES:
    if _dtypes.is_floating(t_dtype):
      return to_float32(t)  # one rounding (or exact widening)
    return lax.convert_element_type(t, _F32)
  if x_dtype == _F64:
    if _dtypes.is_floating(t_dtype):
      return to_float64(t)
    return lax.convert_element_type(t, _F64)
  if _dtypes.is_floating(t_dtype):
    # float16/bfloat16 widen to float32 exactly; float32/float64 are kept as they are.
    return t if t_dtype in (_F32, _F64) else to_float32(t)
  return _traced_integer_operand(t, t_dtype, x_dtype)


def canonicalize_threshold(threshold, x_dtype):
  """The 0-d threshold operand for x of dtype `x_dtype` (see the module docstring).

  Raises TypeError for a non-real threshold, ValueError for a non-scalar one.
  """
  x_dtype = np.dtype(x_dtype)
  if is_static(threshold):
    return _static_operand(threshold, x_dtype)
  return _traced_operand(threshold, x_dtype)


# --- The compare ----------------------------------------------------------------------------


def integer_threshold(threshold, x_dtype):
  """(k, all_pass, in_range) of a float threshold t for integer x of dtype D, exactly.

  k = floor(t) as D (0 where not in range); all_pass: k < min(D); in_range: min(D) <= k <= max(D)
  (False for NaN and k >= max(D) + 1: none passes). Inside the range D(k) is exact and
  x > t <=> x > D(k). min(D) and max(D) + 1 are powers of two (or 0), exact in float32 and
  float64; k is an integer or ±inf (never subnormal), so the comparisons with them are
  flush-proof (and so is `floor`).
  """
  info = np.iinfo(x_dtype)
  k = floor(threshold)
  lo = np.asarray(info.min, threshold.dtype)
  hi = np.asarray(int(info.max) + 1, threshold.dtype)
  in_range = (k >= lo) & (k < hi)
  k_int = lax.convert_element_type(jnp.where(in_range, k, jnp.zeros_like(k)), x_dtype)
  return k_int, k < lo, in_range


def _integer_mask_for_real_threshold(x, threshold):
  """x > t for integer x and a float t, exactly as real numbers (see integer_threshold)."""
  k, all_pass, in_range = integer_threshold(threshold, x.dtype)
  return all_pass | (in_range & (x > k))


def threshold_mask(x, threshold):
  """The boolean `x > threshold` of docs/behaviour.md §1, for a canonical threshold operand."""
  x_dtype = np.dtype(x.dtype)
  if _dtypes.is_floating(x_dtype):
    # float16 / bfloat16 / float32 against the float32 threshold, float64 against float64;
    # subnormals are numbers in every flush mode (`greater`).
    return greater(x, threshold)
  if np.dtype(threshold.dtype) == x_dtype:
    return x > threshold
  return _integer_mask_for_real_threshold(x, threshold)
