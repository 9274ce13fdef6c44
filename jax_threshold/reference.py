"""The jnp reference computation of threshold_backward, and its MLIR lowering.

Plain lax/jnp ops only, so XLA fuses it with its neighbours on every platform.
It is the executable form of docs/behaviour.md §1 and of the threshold operand
convention documented in `primitive.py`; the compare itself is `_threshold.threshold_mask`.
"""

import jax
import jax.numpy as jnp
from jax import lax
from jax.interpreters import mlir
import numpy as np

from jax_threshold._threshold import threshold_mask
from jax_threshold.primitive import explicit_output_sharding

_SIXTEEN_BIT_FLOATS = (np.dtype(jnp.bfloat16), np.dtype(jnp.float16))


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
  return _select_or_zero(mask, grad_output)


def _select_or_zero(mask, grad_output):
  """`grad_output` where `mask`, else +0. A 16-bit float is selected as its bits (uint16), the
  same bits: XLA's CPU backend would run a float select of bfloat16 in float32, widening and
  narrowing every element."""
  if np.dtype(grad_output.dtype) not in _SIXTEEN_BIT_FLOATS:
    return lax.select(mask, grad_output, jnp.zeros_like(grad_output))
  bits = lax.bitcast_convert_type(grad_output, np.uint16)
  selected = lax.select(mask, bits, jnp.zeros_like(bits))  # +0's bits are 0
  return lax.bitcast_convert_type(selected, grad_output.dtype)


reference_lowering = mlir.lower_fun(threshold_backward_reference, multiple_results=False)
