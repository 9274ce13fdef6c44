"""Flax NNX face of the threshold activation.

    from jax_threshold.nnx import Threshold
    model = nnx.Sequential(nnx.Linear(64, 64, rngs=rngs), Threshold(0.1, 0.0), ...)

The module holds no parameters or state (`threshold`, `value` and
`implementation` are static attributes); it calls `jax_threshold.threshold`,
so its gradient runs through the `threshold_backward` primitive. Importing
this module needs Flax; `import jax_threshold` does not.
"""

import jax
from jax.typing import ArrayLike

import jax_threshold as _jt

try:
  from flax import nnx
except ImportError as e:  # Flax is optional: name the extra that brings it
  raise ImportError(
    f"jax_threshold.nnx needs Flax (flax.nnx), which could not be imported ({e}). "
    "Install it with: pip install 'jax-threshold[flax]'"
  ) from e


class Threshold(nnx.Module):
  """`x if x > threshold else value`, elementwise (like `torch.nn.Threshold`).

  Args:
    threshold: the strict cut-off; `x == threshold` maps to `value`.
    value: what replaces the inputs at or below `threshold`.
    implementation: a name from `jax_threshold.available_implementations()`
      ("auto", "reference", "ffi"), or None to follow the enclosing
      `jax_threshold.implementation(...)` context.
    inplace: accepted (also positionally, third, as in PyTorch) so that
      `torch.nn.Threshold(0.1, 20, inplace=True)` ports verbatim; a no-op: JAX
      arrays are immutable and the result is always a new array (under
      `jax.jit` with `donate_argnums`, XLA may reuse x's buffer).

  Call: `module(x)` returns an array of x's shape and dtype; errors are those of
  `jax_threshold.threshold` (TypeError for an unsupported dtype, ValueError for
  a bad threshold, value or implementation name).

  Example:
    >>> model = nnx.Sequential(nnx.Linear(3, 4, rngs=nnx.Rngs(0)), Threshold(0.1, 0.0))
    >>> model(jnp.ones((2, 3))).shape
    (2, 4)
  """

  def __init__(
    self,
    threshold: float,
    value: float,
    inplace: bool = False,
    *,
    implementation: str | None = None,
  ) -> None:
    self.threshold = threshold
    self.value = value
    self.inplace = inplace  # a no-op (see above)
    self.implementation = implementation

  def __call__(self, x: ArrayLike) -> jax.Array:
    return _jt.threshold(x, self.threshold, self.value, implementation=self.implementation)
