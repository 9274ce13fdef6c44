"""An independent NumPy oracle for threshold_backward and threshold (SPEC section 1).

Written from the spec, not from the package: float16/bfloat16/float32 compare in
float32 with the threshold rounded once to float32, float64 in float64, and
integers exactly as real numbers via fractions.Fraction, element by element.
"""

from fractions import Fraction
import math

import ml_dtypes
import numpy as np

_NARROW_FLOATS = (np.dtype(np.float32), np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))


def _exact(value):
  """A number as a Fraction, or +-inf / NaN as a float."""
  value = np.asarray(value).item() if isinstance(value, (np.ndarray, np.generic)) else value
  if isinstance(value, float) and not math.isfinite(value):
    return value
  return Fraction(value)


def threshold_mask(x, threshold):
  x = np.asarray(x)
  if x.dtype in _NARROW_FLOATS:
    t = np.float32(np.asarray(threshold).item()) if not isinstance(threshold, int) else np.float32(float(threshold))
    return x.astype(np.float32) > t
  if x.dtype == np.float64:
    return x > np.float64(np.asarray(threshold).item())
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
