"""Whether this build's XLA FFI handlers can be registered with the running jaxlib.

A handler reports to XLA the XLA FFI API version of the headers it was compiled
against. XLA accepts a handler whose version has XLA's major version and a minor
version no newer than its own; anything else fails at registration, and on CPU
that failure is raised when JAX initialises its backend: every later JAX call
of the process fails, not only this package's. So jax_threshold.ffi asks here
first and, when the answer is no, registers nothing ("ffi" is then unavailable,
with the reason this module writes).

The running jaxlib's API version is read from the `xla/ffi/api/c_api.h` that
jaxlib ships (`jax.ffi.include_dir()`), the header of the very build that runs.
Without it, the fallback is the jaxlib version: XLA keeps loading handlers built
against older headers, so a jaxlib at least as new as the one whose headers the
extension was built with accepts them.
"""

from __future__ import annotations

import os
import re

ApiVersion = tuple[int, int]

_C_API_HEADER = os.path.join("xla", "ffi", "api", "c_api.h")
_DEFINE = re.compile(r"^\s*#\s*define\s+XLA_FFI_API_(MAJOR|MINOR)\s+(\d+)\s*$", re.MULTILINE)


# The jaxlib whose headers the wheels and `pip install .` build against (pyproject.toml's
# build requirement): the oldest supported, so that every supported jaxlib loads the handlers.
OLDEST_JAXLIB = "0.10.2"


class IncompatibleFfiApi(ImportError):
  """The extension's handlers would not register with the running jaxlib."""


def parse_c_api_header(text: str) -> ApiVersion | None:
  """(major, minor) from the text of xla/ffi/api/c_api.h, or None if it defines neither."""
  found = {m.group(1): m.group(2) for m in _DEFINE.finditer(text)}
  if "MAJOR" not in found or "MINOR" not in found:
    return None
  return int(found["MAJOR"]), int(found["MINOR"])


def running_api_version() -> ApiVersion | None:
  """The XLA FFI API version of the running jaxlib, or None if its header cannot be read."""
  import jax  # pylint: disable=import-outside-toplevel  (this module is imported early)

  try:
    with open(os.path.join(jax.ffi.include_dir(), _C_API_HEADER), encoding="utf-8") as f:
      return parse_c_api_header(f.read())
  except (OSError, AttributeError, UnicodeDecodeError):
    return None


def _release(version: str) -> tuple[int, ...] | None:
  """The numeric release of a version string ("0.12.0.1" -> (0, 12, 0, 1)), None if not one."""
  m = re.match(r"^\s*(\d+(?:\.\d+)*)", version)
  return tuple(int(p) for p in m.group(1).split(".")) if m else None


def _fmt(version: ApiVersion) -> str:
  return f"{version[0]}.{version[1]}"


def incompatibility(
  built: ApiVersion, running: ApiVersion | None, *, built_jaxlib: str, running_jaxlib: str
) -> str | None:
  """Why handlers built for XLA FFI API `built` cannot be registered here; None if they can.

  Args:
    built: the API version the handlers were compiled against.
    running: the running jaxlib's API version, None if unknown.
    built_jaxlib: version of the jaxlib whose headers the build used ("" if unknown).
    running_jaxlib: version of the running jaxlib.

  Returns:
    None when registering is safe, else a message saying why not and what to install.
  """
  headers = f"jaxlib {built_jaxlib}'s" if built_jaxlib else "the"
  if running is not None:
    if running[0] == built[0] and built[1] <= running[1]:
      return None
    why = (
      f"jax_threshold's XLA FFI handlers were built against {headers} XLA FFI headers (API "
      f"{_fmt(built)}), which jaxlib {running_jaxlib} (API {_fmt(running)}) cannot load"
    )
  else:
    built_release, running_release = _release(built_jaxlib), _release(running_jaxlib)
    if (
      built_release is not None
      and running_release is not None
      and (running_release >= built_release)
    ):
      return None
    why = (
      f"jax_threshold cannot tell the XLA FFI API version of jaxlib {running_jaxlib} (no "
      f"readable {_C_API_HEADER} in jax.ffi.include_dir()), and its handlers were built "
      f"against {headers} headers (API {_fmt(built)})"
    )
  upgrade = (
    f"`pip install -U 'jaxlib>={built_jaxlib}'`" if built_jaxlib else "install a newer jaxlib"
  )
  return (
    f"{why}. Registering them would break JAX's CPU backend, so implementation 'ffi' is "
    f"disabled; JAX and the reference lowering work as usual. To use 'ffi': {upgrade}, "
    f"or reinstall jax-threshold from its wheel or with `pip install --force-reinstall .` "
    f"in its source tree (both build against jaxlib {OLDEST_JAXLIB}'s headers, which "
    f"every supported jaxlib loads)."
  )


def check(native) -> None:
  """Raises IncompatibleFfiApi when the native module's handlers cannot load in this jaxlib.

  Args:
    native: the extension module (jax_threshold._aclnn_ext), built with the FFI handler.
  """
  import jaxlib.version  # pylint: disable=import-outside-toplevel

  reason = incompatibility(
    tuple(native.XLA_FFI_API_VERSION),
    running_api_version(),
    built_jaxlib=native.XLA_FFI_HEADERS_JAXLIB_VERSION,
    running_jaxlib=jaxlib.version.__version__,
  )
  if reason is not None:
    raise IncompatibleFfiApi(reason)
