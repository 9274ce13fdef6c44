"""A batch of thresholds over a small x, launched along the batch axis (CPU custom call).

`vmap` over B thresholds of a function on an x of N elements gives the primitive a threshold of
shape (B, 1, ..., 1) and an output of B x N. The custom call runs one executor plan per threshold
element, so B = 10^6 thresholds on N = 3 elements are 10^6 kernel launches of 3 elements each:
microseconds of launch work for nanoseconds of data. This rewrites the call so that the kernel
runs N launches of B elements instead, with the roles of x and the threshold swapped:

    x[j] > t[b]  <=>  key(t[b]) > key(x[j])

for an order-reversing map `key` that is exact on both operands: negation for floats (NaN stays
NaN, so either side being NaN still fails; -0 and +0 stay equal), bitwise NOT for integers
(~v = -1 - v reverses the order of every signed and unsigned value without overflow). So one
custom call with x' = key(t) of shape (1, B), threshold' = key(x) of shape (N, 1) and
grad_output' = grad_output moved to (N, B) (or (N, 1) when it does not vary over the batch)
computes out transposed, and the handler's loop over the threshold's dims runs N executor plans
of B elements each. The same kernels select the same bits; only the launch count changes.

The comparison type decides what key(t) can be:
  float32 / float64 x: the threshold has x's dtype: key = negation, grad_output as it is.
  float16 / bfloat16 x: the comparison is in float32 (docs/behaviour.md §1) and key(t) needs
    float32, so the call runs the float32 kernel; grad_output travels as its 16 bits
    zero-extended in a float32 (a select moves bits, and the handler runs with subnormals as
    numbers), and the result's low 16 bits are the answer.
  integer x with a threshold of its own dtype D: key = bitwise NOT, in D.
  int8 / uint8 / int32 x with a float threshold t (compared as a real): k = floor(t), clamped
    to [min(D) - 1, max(D)] (below: every x passes; at or above max(D), or NaN: none passes)
    is exact in a wider integer type W (int32, or int64 for int32 x under x64), and
    x > t <=> ~k > ~x in W; grad_output is widened to W and narrowed back, both exact.
Everything else (int64 x with a float threshold, int32 x with one without x64, symbolic
shapes, a call the SPMD partitioner will split) keeps the per-threshold launches.

Only on CPU: the NPU handler takes no broadcast operands (README, NPU build).
"""

import math

import jax
import jax.numpy as jnp
from jax import lax
from jax.interpreters import mlir
import numpy as np

from jax_threshold import _dtypes
from jax_threshold import flush_proof
from jax_threshold import reference
from jax_threshold.primitive import threshold_backward_p

# Transpose only where it cuts launches by a wide margin: at most this many elements per
# threshold (one executor plan each), and at least this many thresholds per element.
MAX_ELEMENTS_PER_THRESHOLD = 256
MIN_THRESHOLDS_PER_ELEMENT = 16

_F32 = np.dtype(np.float32)


def _static_shape(shape):
  return all(isinstance(d, (int, np.integer)) for d in shape)


def _wide_integer(x_dtype):
  """The integer type W that holds [min(D) - 1, max(D)] for integer x of dtype D, or None."""
  if np.iinfo(x_dtype).bits <= 16:
    return np.dtype(np.int32)
  if np.iinfo(x_dtype).bits == 32 and jax.dtypes.canonicalize_dtype(np.int64) == np.int64:
    return np.dtype(np.int64)
  return None


def _batch_split(out_shape, threshold_shape):
  """p: the output dims [0, p) the threshold varies over (its last non-1 dim + 1)."""
  varying = [d for d, size in enumerate(threshold_shape) if size != 1]
  return varying[-1] + 1 if varying else 0


def applies(ctx) -> bool:
  """Whether the call of lowering context `ctx` runs transposed (see the module docstring)."""
  g_aval, x_aval, t_aval = ctx.avals_in
  out_aval = ctx.avals_out[0]
  shapes = (g_aval.shape, x_aval.shape, t_aval.shape, out_aval.shape)
  if t_aval.ndim == 0 or not all(_static_shape(s) for s in shapes):
    return False
  # One device: a call the partitioner splits keeps its elementwise form (partitioning.py).
  if getattr(ctx.module_context.axis_context, "num_devices", None) != 1:
    return False
  out_shape = tuple(out_aval.shape)
  p = _batch_split(out_shape, t_aval.shape)
  x_padded = (1,) * (len(out_shape) - x_aval.ndim) + tuple(x_aval.shape)
  if p == 0 or any(d != 1 for d in x_padded[:p]):
    return False  # x varies over the batch: no scalar per launch after swapping roles
  thresholds, elements = math.prod(out_shape[:p]), math.prod(out_shape[p:])
  if elements > MAX_ELEMENTS_PER_THRESHOLD or thresholds < MIN_THRESHOLDS_PER_ELEMENT * elements:
    return False
  x_dtype, t_dtype = np.dtype(x_aval.dtype), np.dtype(t_aval.dtype)
  if _dtypes.is_integer(x_dtype) and t_dtype != x_dtype:
    return _wide_integer(x_dtype) is not None
  return True


def _integer_threshold_in(threshold, x_dtype, wide):
  """floor(t) of a float threshold, clamped to [min(D) - 1, max(D)], exactly, in `wide`.

  x > t <=> x > k with k that clamp (docs/behaviour.md §1): min(D) - 1 lets every x pass,
  max(D) none.
  """
  info = np.iinfo(x_dtype)
  k, all_pass, in_range = reference.integer_threshold(threshold, x_dtype)
  below = np.asarray(int(info.min) - 1, wide)
  none_pass = np.asarray(info.max, wide)
  return jnp.where(
    in_range, lax.convert_element_type(k, wide), jnp.where(all_pass, below, none_pass)
  )


def _encode(grad_output, x, threshold):
  """(grad_output', key(x), key(threshold), decode) in the comparison type (module docstring)."""
  x_dtype, t_dtype = np.dtype(x.dtype), np.dtype(threshold.dtype)
  same = lambda v: v
  if x_dtype in (_F32, np.dtype(np.float64)):
    return grad_output, -x, -threshold, same
  if _dtypes.is_floating(x_dtype):  # float16 / bfloat16: the float32 kernel, bits carried
    carry = lambda v: lax.bitcast_convert_type(
      lax.convert_element_type(lax.bitcast_convert_type(v, np.uint16), np.uint32), np.float32
    )
    decode = lambda v: lax.bitcast_convert_type(
      lax.convert_element_type(lax.bitcast_convert_type(v, np.uint32), np.uint16), x_dtype
    )
    return carry(grad_output), -flush_proof.to_float32(x), -threshold, decode
  if t_dtype == x_dtype:
    return grad_output, lax.bitwise_not(x), lax.bitwise_not(threshold), same
  wide = _wide_integer(x_dtype)
  k = _integer_threshold_in(threshold, x_dtype, wide)
  widen = lambda v: lax.convert_element_type(v, wide)
  narrow = lambda v: lax.convert_element_type(v, x_dtype)
  return widen(grad_output), lax.bitwise_not(widen(x)), lax.bitwise_not(k), narrow


def threshold_backward_transposed(grad_output, x, threshold, *, implementation):
  """The primitive's result, computed by one custom call over (N, B) (module docstring)."""
  out_shape = jnp.broadcast_shapes(grad_output.shape, x.shape, threshold.shape)
  rank = len(out_shape)
  p = _batch_split(out_shape, threshold.shape)
  batch, inner = out_shape[:p], out_shape[p:]
  thresholds, elements = math.prod(batch), math.prod(inner)
  pad = lambda v: lax.expand_dims(v, tuple(range(rank - v.ndim)))
  grad_output, x = pad(grad_output), pad(x)
  g_key, x_key, t_key, decode = _encode(grad_output, x, threshold)
  # threshold' = key(x): one scalar per launch, along the leading dim.
  x_key = jnp.broadcast_to(x_key, (1,) * p + inner).reshape(elements, 1)
  # x' = key(t): the batch, along the trailing dim.
  t_key = jnp.broadcast_to(t_key, batch + (1,) * (rank - p)).reshape(1, thresholds)
  # grad_output' in full: XLA writes it into its own (reused) buffers, where the executor would
  # otherwise copy a broadcast one into a fresh workspace per launch.
  if all(d == 1 for d in grad_output.shape[:p]):
    g_key = jnp.broadcast_to(g_key, (1,) * p + inner).reshape(elements, 1)
    g_key = lax.broadcast_in_dim(g_key, (elements, thresholds), (0, 1))
  else:
    g_key = jnp.broadcast_to(g_key, out_shape).reshape(thresholds, elements).T
  out = threshold_backward_p.bind(g_key, t_key, x_key, implementation=implementation)
  return decode(out.T.reshape(out_shape))


lowering = mlir.lower_fun(threshold_backward_transposed, multiple_results=False)
