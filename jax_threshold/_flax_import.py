"""The one place that imports Flax for `jax_threshold.linen` and `jax_threshold.nnx`.

Flax is an optional dependency: `import jax_threshold` never imports it, and
importing a Flax integration module without Flax installed fails with an
ImportError that says which extra to install, instead of a bare
`No module named 'flax'` from deep inside the package.
"""

import importlib
import types

FLAX_EXTRA_HINT = "pip install 'jax-threshold[flax]'"


def import_flax(submodule: str, *, needed_by: str) -> types.ModuleType:
  """Returns `flax.<submodule>`, or raises an ImportError naming the extra."""
  try:
    return importlib.import_module(f"flax.{submodule}")
  except ImportError as e:
    raise ImportError(
      f"{needed_by} needs Flax (flax.{submodule}), which could not be "
      f"imported ({e}). Install it with: {FLAX_EXTRA_HINT}"
    ) from e
