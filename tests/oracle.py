"""An independent NumPy oracle for threshold_backward and threshold (docs/behaviour.md §1).

Written from the spec, not from the package: float16/bfloat16/float32 compare in float32 with
the threshold rounded once to float32, float64 in float64 (rounded once to float64), and
integers exactly as real numbers via fractions.Fraction, element by element. The threshold is
any real number (int of any size, float, Fraction, Decimal, NumPy scalar, 0-d array); its one
rounding is found by bisection over the target format's ordered bit patterns with exact
Fraction comparisons -- deliberately a different method from the package's
(jax_threshold/_threshold.py, which scales and rounds the significand).
"""

from decimal import Decimal
from fractions import Fraction
import math

import ml_dtypes
import numpy as np

_NARROW_FLOATS = (np.dtype(np.float32), np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))


def _exact(value):
  """A number as a Fraction, or +-inf / NaN as a float."""
  if isinstance(value, np.ndarray):
    value = value[()]
  if isinstance(value, np.generic):
    if value.dtype.kind in "iu":
      return Fraction(int(value))
    if value.dtype.itemsize > 8:  # longdouble
      if not np.isfinite(value):
        return float(value)
      return Fraction(*value.as_integer_ratio())
    value = float(value)
  if isinstance(value, Decimal):
    if value.is_nan():
      return math.nan
    if value.is_infinite():
      return -math.inf if value.is_signed() else math.inf
  if isinstance(value, float) and not math.isfinite(value):
    return value
  return Fraction(value)


def _round(threshold, float_type):
  """The threshold rounded once to float_type (np.float32 / np.float64), to nearest even."""
  t = _exact(threshold)
  if isinstance(t, float):
    return float_type(t)
  uint, inf_bits = {4: (np.uint32, 0x7F800000), 8: (np.uint64, 0x7FF0000000000000)}[
    np.dtype(float_type).itemsize
  ]
  value_of = lambda b: Fraction(float(uint(b).view(float_type)))
  a = abs(t)
  lo, hi = 0, inf_bits - 1  # the largest pattern whose value is <= a lies in [lo, hi]
  while lo < hi:
    mid = (lo + hi + 1) // 2
    if value_of(mid) <= a:
      lo = mid
    else:
      hi = mid - 1
  below = value_of(lo)
  if lo + 1 < inf_bits:
    above = value_of(lo + 1)
  else:  # past the largest finite value the next step is 2^(emax+1): IEEE overflow to inf
    above = below + (below - value_of(lo - 1))
  if a - below < above - a or (a - below == above - a and lo % 2 == 0):
    bits = lo
  else:
    bits = lo + 1
  result = uint(bits).view(float_type)
  return -result if t < 0 else result


def threshold_mask(x, threshold):
  x = np.asarray(x)
  if x.dtype in _NARROW_FLOATS:
    return x.astype(np.float32) > _round(threshold, np.float32)
  if x.dtype == np.float64:
    return x > _round(threshold, np.float64)
  t = _exact(threshold)
  if isinstance(t, float):  # inf or NaN
    passes = (not math.isnan(t)) and t < 0
    return np.full(x.shape, passes, dtype=bool)
  flat = [Fraction(int(v)) > t for v in x.ravel()]
  return np.array(flat, dtype=bool).reshape(x.shape)


def bits(a):
  """Floats as their bit patterns (NaNs and -0.0 compare exactly); integers unchanged."""
  a = np.asarray(a)
  if a.dtype.kind == "f" or a.dtype == ml_dtypes.bfloat16:
    return a.view(f"u{a.dtype.itemsize}")
  return a


def threshold_backward(grad_output, x, threshold):
  grad_output, x = np.asarray(grad_output), np.asarray(x)
  mask = threshold_mask(x, threshold)
  shape = np.broadcast_shapes(grad_output.shape, mask.shape)
  zero = np.zeros((), grad_output.dtype)
  return np.where(np.broadcast_to(mask, shape), np.broadcast_to(grad_output, shape), zero)


def threshold(x, threshold_value, value):
  x = np.asarray(x)
  mask = threshold_mask(x, threshold_value)
  return np.where(mask, x, np.asarray(value).astype(x.dtype))
