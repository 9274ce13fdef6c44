"""Choosing which lowering of threshold_backward runs.

Names: "reference" (the fusable jnp lowering, every platform), "ffi" (the XLA
FFI custom call, where the native extension registered it) and "auto" (resolved
per platform when lowering). A call's `implementation=None` means the default:
the innermost `jax_threshold.implementation(...)` block, else the environment
variable JAX_THRESHOLD_IMPLEMENTATION (read when tracing), else "auto".

The block's value lives in a JAX config state that is part of jit's cache key:
a function jitted under "reference" and called again inside
`implementation("ffi")` is traced again instead of silently reusing the
reference trace.
"""

import contextlib
import os

from jax._src import config as jax_config  # no public API creates a jit-keyed state

IMPLEMENTATIONS = ("auto", "reference", "ffi")
ENV_VAR = "JAX_THRESHOLD_IMPLEMENTATION"

# Named so that JAX's own env-var lookup (the upper-cased name) does not read
# ENV_VAR at import time, where a bad value would break `import jax_threshold`.
_scoped_implementation = jax_config.optional_enum_state(
    name="jax_threshold_scoped_implementation",
    enum_values=IMPLEMENTATIONS,
    default=None,
    help="Default threshold_backward implementation inside "
         "jax_threshold.implementation(...); None defers to "
         f"${ENV_VAR}, then 'auto'.",
    include_in_jit_key=True,
    include_in_trace_context=True,
)


def validate_name(name) -> str:
  if not isinstance(name, str) or name not in IMPLEMENTATIONS:
    raise ValueError(f"threshold_backward: unknown implementation {name!r}; "
                     f"expected one of {IMPLEMENTATIONS} (or None for the default)")
  return name


def _check_available(name: str) -> None:
  from jax_threshold import lowering  # pylint: disable=g-import-not-at-top  (import cycle)
  lowering.check_available(name)


def default_implementation() -> str:
  """The implementation a call with `implementation=None` uses right now."""
  scoped = _scoped_implementation.value
  if scoped is not None:
    return scoped
  from_env = os.environ.get(ENV_VAR)
  if from_env:
    if from_env not in IMPLEMENTATIONS:
      raise ValueError(f"threshold_backward: ${ENV_VAR}={from_env!r} is not one of "
                       f"{IMPLEMENTATIONS}")
    return from_env
  return "auto"


def resolve(name) -> str:
  """Validates a call's `implementation` argument; None becomes the default.

  The result is still unresolved with respect to the platform ("auto" stays
  "auto"); the lowering picks the platform's implementation.
  """
  name = default_implementation() if name is None else validate_name(name)
  _check_available(name)
  return name


@contextlib.contextmanager
def implementation(name):
  """Makes `name` the default implementation inside the block.

      with jax_threshold.implementation("reference"):
        y = jax.jit(f)(x)  # every threshold_backward inside f lowers to jnp

  Raises ValueError for an unknown name, and for "ffi" when the native
  extension is not available.
  """
  name = validate_name(name)
  _check_available(name)
  with _scoped_implementation(name):
    yield
