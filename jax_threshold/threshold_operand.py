"""Turning the user's threshold into the primitive's threshold operand.

The primitive receives the threshold as an operand (never a static param), so a
jitted function that takes it as an argument does not recompile when its value
changes, and `vmap` can batch it. The operand's dtype follows from x's dtype:

  x float16 / bfloat16 / float32 -> float32, the threshold rounded ONCE to float32
  x float64                      -> float64
  x integer of dtype D           -> D, or float32 / float64 holding a real t
                                    compared exactly: with k = floor(t),
                                    k < min(D): every x passes; k >= max(D) or
                                    t NaN: none passes; else x > D(k).

A static threshold (a Python int of any size, float, Fraction, Decimal, NumPy
scalar or 0-d array) is converted from its exact value by threshold_value.py,
rounded at most once: for float x straight to float32 / float64 (never via
float64 first), for integer x floor(t) exactly, clamped into D, with
float32(-inf) standing for "below min(D)" (every x passes) and D(max) for "at or
above max(D)" (none passes). So `x > 16777216.5` is exact for int32 and uint8
with threshold -1 lets everything pass.
"""

import numbers

import jax
import jax.numpy as jnp
from jax import lax
import numpy as np

from jax_threshold import _dtypes
from jax_threshold import flush_proof
from jax_threshold import threshold_value

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


def _is_static(threshold) -> bool:
  if isinstance(threshold, jax.Array):  # concrete arrays and tracers alike
    return False
  return isinstance(threshold, (numbers.Number, np.generic, np.ndarray))


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


def _static_operand(threshold, x_dtype: np.dtype) -> np.ndarray:
  """The operand of a static threshold, from its exact value (threshold_value.py)."""
  value = threshold_value.exact_value(threshold)
  if x_dtype in _dtypes.NARROW_FLOAT_DTYPES:
    return np.asarray(threshold_value.round_to_float(value, threshold_value.FLOAT32), _F32)
  if x_dtype == _F64:
    return np.asarray(threshold_value.round_to_float(value, threshold_value.FLOAT64), _F64)
  # Integer x: decided exactly with k = floor(t).
  mode, k = threshold_value.integer_comparison(value, x_dtype)
  if mode == threshold_value.ALL_PASS:
    return np.asarray(-np.inf, _F32)
  if mode == threshold_value.NONE_PASS:
    return np.asarray(np.iinfo(x_dtype).max, x_dtype)
  return np.asarray(k, x_dtype)


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
  try:
    t = jnp.asarray(t)
  except (TypeError, ValueError):
    raise TypeError(
      f"threshold_backward: threshold must be a real number; got {type(t).__name__} {t!r}"
    ) from None
  _check_scalar_shape(t.shape)
  t_dtype = _check_real_dtype(t.dtype)
  # Float conversions go through flush_proof: on XLA's CPU threads (flush-to-zero and
  # denormals-are-zero set) a plain conversion would turn a subnormal threshold into 0.
  if x_dtype in _dtypes.NARROW_FLOAT_DTYPES:
    if _dtypes.is_floating(t_dtype):
      return flush_proof.to_float32(t)  # one rounding (or exact widening)
    return lax.convert_element_type(t, _F32)
  if x_dtype == _F64:
    if _dtypes.is_floating(t_dtype):
      return flush_proof.to_float64(t)
    return lax.convert_element_type(t, _F64)
  if _dtypes.is_floating(t_dtype):
    # float16/bfloat16 widen to float32 exactly; float32/float64 are kept as they are.
    return t if t_dtype in (_F32, _F64) else flush_proof.to_float32(t)
  return _traced_integer_operand(t, t_dtype, x_dtype)


def canonicalize_threshold(threshold, x_dtype):
  """The 0-d threshold operand for x of dtype `x_dtype` (see the module docstring).

  Raises TypeError for a non-real threshold, ValueError for a non-scalar one.
  """
  x_dtype = np.dtype(x_dtype)
  if _is_static(threshold):
    return _static_operand(threshold, x_dtype)
  return _traced_operand(threshold, x_dtype)
