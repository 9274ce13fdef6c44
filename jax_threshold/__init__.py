"""jax-threshold: `threshold_backward` as a JAX primitive.

import jax_threshold as jt
jt.threshold_backward(grad_output, x, threshold)  # grad_output where x > threshold, else 0
jt.threshold(x, threshold, value)                 # x if x > threshold else value
with jt.implementation("reference"): ...          # choose the lowering
"""

import importlib
import warnings

from jax_threshold import ffi_api_version as _ffi_api_version
from jax_threshold import lowering as _lowering  # registers the lowerings
from jax_threshold._version import __version__
from jax_threshold.api import threshold
from jax_threshold.api import threshold_backward
from jax_threshold.implementation_choice import implementation
from jax_threshold.lowering import available_implementations
from jax_threshold.lowering import ffi_targets
from jax_threshold.lowering import register_lowering_implementation
from jax_threshold.primitive import threshold_backward_p


# Importing it registers the "ffi" implementation (register_lowering_implementation).
_FFI_MODULE = "jax_threshold.ffi"


def _load_ffi() -> None:
  """Registers the "ffi" implementation when the native extension is importable."""
  try:
    importlib.import_module(_FFI_MODULE)
  except _ffi_api_version.IncompatibleFfiApi as e:  # built for a newer jaxlib than this one
    _lowering.note_unavailable("ffi", str(e))
    warnings.warn(str(e), RuntimeWarning, stacklevel=2)
  except ImportError as e:  # no compiled extension (e.g. a source checkout)
    _lowering.note_unavailable(
      "ffi",
      f"the native extension is missing ({type(e).__name__}: {e}); build the "
      "package with its C++ extension (pip install .)",
    )


def _native_paths_missing(*_):
  raise RuntimeError("jax_threshold.native_paths is missing from this installation")


try:
  from jax_threshold.native_paths import get_include
  from jax_threshold.native_paths import get_lib
except ImportError:  # written by the native build; absent in a bare source tree
  get_include = get_lib = _native_paths_missing

_load_ffi()

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
