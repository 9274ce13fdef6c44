"""Choosing which lowering of threshold_backward runs.

Names: "reference" (the fusable jnp lowering, every platform), "ffi" (the XLA
FFI custom call, where the native extension registered it) and "auto" (resolved
per platform when lowering). A call's `implementation=None` means the default:
the innermost `jax_threshold.implementation(...)` block, else the environment
variable JAX_THRESHOLD_IMPLEMENTATION (read when tracing), else "auto".

This module also keeps which implementations are available (registered by a
lowering module, or noted missing with the reason), so that validating a name
needs nothing from the lowering modules above it on the data path.

The block's value lives in a JAX config state that is part of jit's cache key:
a function jitted under "reference" and called again inside
`implementation("ffi")` is traced again instead of silently reusing the
reference trace.
"""

import contextlib
import os
from typing import Iterator

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


def validate_name(name: object, where: str = "threshold_backward") -> str:
  """`name` if it is an implementation name, else ValueError (prefixed by `where`)."""
  if not isinstance(name, str) or name not in IMPLEMENTATIONS:
    hint = ""
    if isinstance(name, str) and name.lower() in IMPLEMENTATIONS:
      hint = f"; did you mean {name.lower()!r}?"
    raise ValueError(
      f"{where}: unknown implementation {name!r}; expected one of "
      f"{IMPLEMENTATIONS} (or None for the default){hint}"
    )
  return name


_registered: set[str] = set()  # implementations with a lowering on at least one platform
_missing_reasons: dict[str, str] = {}  # implementation name -> why it is unavailable


def mark_available(name: str) -> None:
  """Records that `name` has a lowering (called by `lowering.register_lowering_implementation`)."""
  _registered.add(name)
  _missing_reasons.pop(name, None)


def note_unavailable(name: str, reason: str) -> None:
  """Records why implementation `name` is missing (shown in the errors that need it)."""
  _missing_reasons[name] = reason


def _shadowing_reason(name: str) -> str | None:
  """For "ffi": whether a source tree hides the installed package (then that is the reason)."""
  if name != "ffi":
    return None
  try:
    from jax_threshold import native_paths  # pylint: disable=g-import-not-at-top
  except ImportError:
    return None
  return native_paths.source_tree_shadowing()


def missing_reason(name: str, default: str) -> str:
  return _shadowing_reason(name) or _missing_reasons.get(name, default)


def available_implementations() -> tuple[str, ...]:
  """The implementation names usable here, besides "auto".

  Returns:
    ("reference",) plus every implementation registered on at least one
    platform: ("reference", "ffi") when the native extension is built.

  Raises:
    Nothing.

  Example:
    >>> jax_threshold.available_implementations()
    ('reference', 'ffi')
  """
  return ("reference",) + tuple(n for n in IMPLEMENTATIONS if n in _registered)


def check_available(name: str, where: str = "threshold_backward") -> None:
  """Raises ValueError when `name` ("auto"/"reference" always are) is not registered."""
  if name in ("auto", "reference") or name in _registered:
    return
  reason = missing_reason(
    name,
    "the native extension jax_threshold._aclnn_ext is missing; build the package "
    "with its C++ extension (pip install .)",
  )
  raise ValueError(f"{where}: implementation {name!r} is not available: {reason}")


def default_implementation() -> str:
  """The implementation a call with `implementation=None` uses right now."""
  scoped = _scoped_implementation.value
  if scoped is not None:
    return scoped
  from_env = os.environ.get(ENV_VAR)
  if from_env:
    if from_env not in IMPLEMENTATIONS:
      raise ValueError(
        f"threshold_backward: ${ENV_VAR}={from_env!r} is not one of {IMPLEMENTATIONS}"
      )
    return from_env
  return "auto"


def resolve(name: str | None) -> str:
  """Validates a call's `implementation` argument; None becomes the default.

  The result is still unresolved with respect to the platform ("auto" stays
  "auto"); the lowering picks the platform's implementation.
  """
  name = default_implementation() if name is None else validate_name(name)
  check_available(name)
  return name


@contextlib.contextmanager
def implementation(name: str) -> Iterator[None]:
  """Makes `name` the default implementation inside the block.

  Args:
    name: "auto" (per platform: the reference lowering on CPU, the custom call
      where it is registered for auto), "reference" (the fusable jnp lowering)
      or "ffi" (the XLA FFI custom call running the AscendC kernels).

  Returns:
    A context manager. Calls with `implementation=None` inside the block use
    `name`; it is part of jit's cache key, so a function jitted under another
    implementation is traced again.

  Raises:
    ValueError: an unknown name, or "ffi" when the native extension is not
      available (the message says why).

  Example:
    >>> with jax_threshold.implementation("reference"):
    ...   y = jax.jit(f)(x)  # every threshold_backward inside f lowers to jnp
  """
  name = validate_name(name, where="jax_threshold.implementation")
  check_available(name, where="jax_threshold.implementation")
  with _scoped_implementation(name):
    yield
