"""A user's threshold -> the comparison docs/behaviour.md §1 defines, rounded at most once.

One conversion for every static threshold, shared by the primitive's threshold operand
(threshold_operand.py) and the executor's Python face (aclnn.py):

  exact_value(t)   any real number a user can write -- an int of any size, a float, a
                   fractions.Fraction (any numbers.Rational), a decimal.Decimal, a NumPy scalar
                   (float16, bfloat16, longdouble, ...), a 0-d array -- as its exact value: a
                   Fraction, or a float for +-inf and NaN. Bools are refused (TypeError).
  round_to_float(v, bits)  that value rounded once, to nearest even, to float32 or float64
                   (beyond the range: +-inf, as IEEE rounding says). Never via float64 first.
  integer_comparison(v, dtype)  for integer x: x > v <=> x > floor(v), decided exactly and
                   clamped to the dtype's range ("all_pass" / "none_pass" / ("compare", k)).

Fraction arithmetic keeps every step exact; the one rounding is the last step.
"""

import decimal
import fractions
import math
import numbers
from typing import NamedTuple, Union

import numpy as np

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


def to_float32(threshold) -> np.float32:
  return np.float32(round_to_float(exact_value(threshold), FLOAT32))


def to_float64(threshold) -> np.float64:
  return np.float64(round_to_float(exact_value(threshold), FLOAT64))


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
