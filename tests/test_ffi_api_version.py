"""The import-time check that keeps XLA FFI handlers off a jaxlib that cannot load them."""

import os
import subprocess
import sys
import textwrap

from absl.testing import absltest
import jax

import jax_threshold
from jax_threshold import ffi

try:
  from jax_threshold import _native
except ImportError:
  _native = None

_HEADER = """
#define XLA_FFI_API_MAJOR 0
// comment between
#define XLA_FFI_API_MINOR 3
struct XLA_FFI_Api_Version { int major_version; };
"""


class ParseHeaderTest(absltest.TestCase):
  def test_reads_major_and_minor(self):
    self.assertEqual(ffi.parse_c_api_header(_HEADER), (0, 3))

  def test_a_header_without_the_defines_gives_none(self):
    self.assertIsNone(ffi.parse_c_api_header("#define XLA_FFI_API_MAJOR 0\n"))
    self.assertIsNone(ffi.parse_c_api_header(""))

  def test_the_running_jaxlib_header_is_read(self):
    version = ffi.running_api_version()
    self.assertIsNotNone(version, "jaxlib ships xla/ffi/api/c_api.h in jax.ffi.include_dir()")
    with open(os.path.join(jax.ffi.include_dir(), "xla", "ffi", "api", "c_api.h")) as f:
      self.assertIn(f"#define XLA_FFI_API_MINOR {version[1]}", f.read())


class IncompatibilityTest(absltest.TestCase):
  def _reason(self, built, running, built_jaxlib="0.10.2", running_jaxlib="0.10.2"):
    return ffi.incompatibility(
      built, running, built_jaxlib=built_jaxlib, running_jaxlib=running_jaxlib
    )

  def test_same_version_loads(self):
    self.assertIsNone(self._reason((0, 3), (0, 3)))

  def test_handlers_built_for_an_older_minor_load_on_a_newer_jaxlib(self):
    self.assertIsNone(self._reason((0, 3), (0, 5), running_jaxlib="0.12.0.1"))

  def test_handlers_built_for_a_newer_minor_are_refused_with_what_to_install(self):
    reason = self._reason((0, 5), (0, 3), built_jaxlib="0.12.0.1", running_jaxlib="0.10.2")
    self.assertIn("API 0.5", reason)
    self.assertIn("jaxlib 0.10.2 (API 0.3)", reason)
    self.assertIn("break JAX's CPU backend", reason)
    self.assertIn("pip install -U 'jaxlib>=0.12.0.1'", reason)
    self.assertIn("pip install --force-reinstall .", reason)

  def test_another_major_version_is_refused(self):
    self.assertIsNotNone(self._reason((0, 3), (1, 0)))
    self.assertIsNotNone(self._reason((1, 0), (0, 9)))

  def test_unknown_build_jaxlib_still_says_what_to_do(self):
    reason = self._reason((0, 5), (0, 3), built_jaxlib="")
    self.assertIn("install a newer jaxlib", reason)

  def test_without_the_running_header_the_jaxlib_versions_decide(self):
    self.assertIsNone(self._reason((0, 3), None, "0.10.2", "0.12.0.1"))
    self.assertIsNone(self._reason((0, 3), None, "0.10.2", "0.10.2"))
    reason = self._reason((0, 5), None, "0.12.0.1", "0.10.2")
    self.assertIn("cannot tell the XLA FFI API version of jaxlib 0.10.2", reason)
    # Nothing known about the build: refused rather than risk breaking JAX.
    self.assertIsNotNone(self._reason((0, 3), None, "", "0.12.0.1"))


_FAKE_NEWER_BUILD = """
import importlib.util, sys, warnings
sys.path.insert(0, {package_parent!r})
spec = importlib.util.spec_from_file_location("jax_threshold._native", {native_file!r})
native = importlib.util.module_from_spec(spec)
spec.loader.exec_module(native)
native.XLA_FFI_API_VERSION = (native.XLA_FFI_API_VERSION[0], 999)  # a build for a future jaxlib
native.XLA_FFI_HEADERS_JAXLIB_VERSION = "99.0"
sys.modules["jax_threshold._native"] = native
with warnings.catch_warnings(record=True) as caught:
  warnings.simplefilter("always")
  import jax_threshold
import jax, jax.numpy as jnp, numpy as np
available = jax_threshold.available_implementations()
assert "ffi" not in available, available
messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
assert any("API 0.999" in m and "jaxlib>=99.0" in m for m in messages), messages
print(float(jnp.ones(3).sum()))  # JAX's CPU backend still initialises
out = jax.jit(jax_threshold.threshold_backward)(jnp.ones(3), jnp.array([0.0, 2.0, 3.0]), 1.0)
print(np.asarray(out).tolist())
try:
  jax_threshold.threshold_backward(jnp.ones(3), jnp.ones(3), 1.0, implementation="ffi")
except ValueError as e:
  assert "API 0.999" in str(e), e
  print("ffi refused")
"""


@absltest.skipIf(
  _native is None or not getattr(_native, "HAS_FFI_HANDLER", False),
  "the native extension with the FFI handler is not built",
)
class RefusedBuildTest(absltest.TestCase):
  def test_the_installed_build_passes_its_own_check(self):
    ffi.check_api_version(_native)
    self.assertIn("ffi", jax_threshold.available_implementations())

  def test_a_build_for_a_newer_api_is_not_registered_and_jax_keeps_working(self):
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(jax_threshold.__file__)))
    script = _FAKE_NEWER_BUILD.format(package_parent=package_parent, native_file=_native.__file__)
    result = subprocess.run(
      [sys.executable, "-c", textwrap.dedent(script)],
      cwd="/",
      capture_output=True,
      text=True,
      timeout=300,
      check=False,
    )
    self.assertEqual(result.returncode, 0, result.stderr)
    self.assertEqual(result.stdout.split("\n")[:3], ["3.0", "[0.0, 1.0, 1.0]", "ffi refused"])


if __name__ == "__main__":
  absltest.main()
