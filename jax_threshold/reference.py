"""The jnp reference computation of threshold_backward, and its MLIR lowering.

Plain lax/jnp ops only, so XLA fuses it with its neighbours on every platform.
It is the executable form of docs/behaviour.md §1 and of the threshold operand
convention documented in `primitive.py`.
"""

import jax
import jax.numpy as jnp
from jax import lax
from jax.interpreters import mlir
import numpy as np

from jax_threshold import _dtypes
from jax_threshold import flush_proof
from jax_threshold.primitive import explicit_output_sharding


def integer_threshold(threshold, x_dtype):
  """(k, all_pass, in_range) of a float threshold t for integer x of dtype D, exactly.

  k = floor(t) as D (0 where not in range); all_pass: k < min(D); in_range: min(D) <= k <= max(D)
  (False for NaN and k >= max(D) + 1: none passes). Inside the range D(k) is exact and
  x > t <=> x > D(k). min(D) and max(D) + 1 are powers of two (or 0), exact in float32 and
  float64; k is an integer or ±inf (never subnormal), so the comparisons with them are
  flush-proof (and so is `flush_proof.floor`).
  """
  info = np.iinfo(x_dtype)
  k = flush_proof.floor(threshold)
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
    # subnormals are numbers in every flush mode (flush_proof.greater).
    return flush_proof.greater(x, threshold)
  if np.dtype(threshold.dtype) == x_dtype:
    return x > threshold
  return _integer_mask_for_real_threshold(x, threshold)


def threshold_backward_reference(grad_output, x, threshold, **params):
  """grad_output where x > threshold else 0: a select, so masked inf/NaN become 0."""
  del params  # the implementation name matters only to the lowering dispatch
  mask = threshold_mask(x, threshold)
  shape = jnp.broadcast_shapes(grad_output.shape, mask.shape)
  # On a mesh with Explicit axes the select's operands must agree on a sharding: both
  # get the output's (the primitive's abstract eval computes the same one).
  sharding = explicit_output_sharding([jax.typeof(grad_output), jax.typeof(mask)])
  grad_output = jnp.broadcast_to(grad_output, shape, out_sharding=sharding)
  mask = jnp.broadcast_to(mask, shape, out_sharding=sharding)
  return lax.select(mask, grad_output, jnp.zeros_like(grad_output))


reference_lowering = mlir.lower_fun(threshold_backward_reference, multiple_results=False)
