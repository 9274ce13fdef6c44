"""The one broadcast rule of threshold_backward: NumPy's, on JAX shapes (symbolic dims too).

grad_output and x broadcast against each other. The threshold operand is 0-d, or has the
output's rank with every dim 1 or the output's, and only leading (batch) dims differ from 1 (the
batching rule's convention, primitive.py). The primitive's shape rule, its transpose and batching
rules, the batch-transposed custom call (ffi.py) and the partitioner all read shapes through here.
"""

import jax
from jax import lax
import numpy as np


def right_align(shape, rank: int) -> tuple:
  """`shape` padded with leading 1s to `rank` dims, as broadcasting lines it up."""
  return (1,) * (rank - len(shape)) + tuple(shape)


def _check_size(shape, grad_output_shape, x_shape):
  """ValueError if a concrete shape has more elements than int64 can count (symbolic: unknown)."""
  if any(jax.export.is_symbolic_dim(d) for d in shape):
    return
  size = 1
  for d in shape:
    size *= int(d)
  if size > np.iinfo(np.int64).max:
    raise ValueError(
      f"threshold_backward: the broadcast shape {tuple(shape)} of grad_output "
      f"{tuple(grad_output_shape)} and x {tuple(x_shape)} has {size} elements, "
      "which overflows int64"
    )


def broadcast_shapes(grad_output_shape, x_shape):
  """The output shape of grad_output and x, or ValueError naming both shapes.

  JAX's own shape broadcasting, not NumPy's: it takes symbolic dims
  (jax.export.symbolic_shape) and any rank (NumPy stops at 32).
  """
  try:
    shape = tuple(lax.broadcast_shapes(tuple(grad_output_shape), tuple(x_shape)))
  except ValueError:
    raise ValueError(
      "threshold_backward: grad_output and x shapes do not broadcast: "
      f"grad_output {tuple(grad_output_shape)}, x {tuple(x_shape)}"
    ) from None
  _check_size(shape, grad_output_shape, x_shape)
  return shape


def output_shape(grad_output_shape, x_shape, threshold_shape):
  """The primitive's output shape: grad_output, x and the threshold operand broadcast."""
  shape = broadcast_shapes(grad_output_shape, x_shape)
  threshold_shape = tuple(threshold_shape)
  if not threshold_shape:
    return shape
  rank = max(len(shape), len(threshold_shape))
  # `==` on symbolic dims is True only where it is provably so.
  padded = right_align(shape, rank)
  ok = len(threshold_shape) == rank and all(
    t == 1 or s == 1 or t == s for t, s in zip(threshold_shape, padded)
  )
  if not ok:
    raise ValueError(
      "threshold_backward: the threshold operand must be 0-d or have the "
      "output's rank with broadcast-compatible dims; got threshold "
      f"{threshold_shape} for grad_output {tuple(grad_output_shape)} and "
      f"x {tuple(x_shape)}"
    )
  return tuple(lax.broadcast_shapes(shape, threshold_shape))


def broadcast_dims(operand_shape, out_shape) -> tuple[int, ...]:
  """The output dims an operand is broadcast along: its missing leading dims, and its dims of
  size 1 where the output's is not 1."""
  lead = len(out_shape) - len(operand_shape)
  return tuple(
    i
    for i in range(len(out_shape))
    if i < lead or (operand_shape[i - lead] == 1 and out_shape[i] != 1)
  )


def batch_split(threshold_shape) -> int:
  """p: the output dims [0, p) a threshold operand varies over (its last non-1 dim + 1)."""
  varying = [d for d, size in enumerate(threshold_shape) if size != 1]
  return varying[-1] + 1 if varying else 0
