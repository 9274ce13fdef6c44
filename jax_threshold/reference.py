"""The jnp reference computation of threshold_backward, and its MLIR lowering.

Plain lax/jnp ops only, so XLA fuses it with its neighbours on every platform.
It is the executable form of docs/behaviour.md §1 and of the threshold operand
convention documented in `primitive.py`; the compare itself is `_threshold.threshold_mask`.
"""

import jax
import jax.numpy as jnp
from jax import lax
from jax.interpreters import mlir

from jax_threshold._threshold import threshold_mask
from jax_threshold.primitive import explicit_output_sharding


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
