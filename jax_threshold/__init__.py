"""jax-threshold: `threshold_backward` as a JAX primitive.

import jax_threshold as jt
jt.threshold_backward(grad_output, x, threshold)  # grad_output where x > threshold, else 0
jt.threshold(x, threshold, value)                 # x if x > threshold else value
with jt.implementation("reference"): ...          # choose the lowering
"""

import warnings

from jax_threshold import ffi as _ffi
from jax_threshold import lowering as _lowering  # registers the lowerings
from jax_threshold._version import __version__
from jax_threshold.api import threshold
from jax_threshold.api import threshold_backward
from jax_threshold.ffi import get_include
from jax_threshold.ffi import get_lib
from jax_threshold.lowering import available_implementations
from jax_threshold.lowering import ffi_targets
from jax_threshold.lowering import implementation
from jax_threshold.lowering import register_lowering_implementation
from jax_threshold.primitive import threshold_backward_p


def _register_ffi() -> None:
  """Registers the "ffi" implementation, or records why it is unavailable."""
  try:
    _ffi.register()
  except _ffi.FfiUnavailable as e:  # this jax/jaxlib cannot take it
    _lowering.note_unavailable("ffi", str(e))
    warnings.warn(str(e), RuntimeWarning, stacklevel=2)
  except ImportError as e:  # no compiled extension (e.g. a source checkout)
    _lowering.note_unavailable(
      "ffi",
      _ffi.source_tree_shadowing()
      or f"the native extension is missing ({type(e).__name__}: {e}); build the "
      "package with its C++ extension (pip install .)",
    )


_register_ffi()

__all__ = [
  "__version__",
  "available_implementations",
  "ffi_targets",
  "get_include",
  "get_lib",
  "implementation",
  "register_lowering_implementation",
  "threshold",
  "threshold_backward",
  "threshold_backward_p",
]
