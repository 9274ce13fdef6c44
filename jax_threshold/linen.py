"""Flax Linen face of the threshold activation.

    from jax_threshold.linen import Threshold
    model = nn.Sequential([nn.Dense(64), Threshold(0.1, 0.0), nn.Dense(10)])

The module holds no parameters; it calls `jax_threshold.threshold`, so its
gradient runs through the `threshold_backward` primitive and whichever lowering
is selected. Importing this module needs Flax; `import jax_threshold` does not.
"""

import jax
from jax.typing import ArrayLike

import jax_threshold as _jt

try:
  from flax import linen as nn
except ImportError as e:  # Flax is optional: name the extra that brings it
  raise ImportError(
    f"jax_threshold.linen needs Flax (flax.linen), which could not be imported ({e}). "
    "Install it with: pip install 'jax-threshold[flax]'"
  ) from e


class Threshold(nn.Module):
  """`x if x > threshold else value`, elementwise (like `torch.nn.Threshold`).

  Attributes:
    threshold: the strict cut-off; `x == threshold` maps to `value`.
    value: what replaces the inputs at or below `threshold`.
    implementation: a name from `jax_threshold.available_implementations()`
      ("auto", "reference", "ffi"), or None to follow the enclosing
      `jax_threshold.implementation(...)` context.
    inplace: accepted so that `torch.nn.Threshold(0.1, 20, inplace=True)` ports
      verbatim; a no-op: JAX arrays are immutable and the result is always a new
      array (under `jax.jit` with `donate_argnums`, XLA may reuse x's buffer).

  Call: `module.apply({}, x)` (or inside `nn.Sequential`) returns an array of
  x's shape and dtype; errors are those of `jax_threshold.threshold`
  (TypeError for an unsupported dtype, ValueError for a bad threshold, value
  or implementation name).

  Example:
    >>> model = nn.Sequential([nn.Dense(4), Threshold(0.1, 0.0)])
    >>> params = model.init(jax.random.key(0), jnp.ones((2, 3)))
    >>> model.apply(params, jnp.ones((2, 3))).shape
    (2, 4)
  """

  threshold: float
  value: float
  implementation: str | None = None
  inplace: bool = False

  def __call__(self, x: ArrayLike) -> jax.Array:
    return _jt.threshold(x, self.threshold, self.value, implementation=self.implementation)
