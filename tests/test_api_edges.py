"""The API edges a JAX user meets first: weak types, error messages that name the real cause.

- A weakly typed grad_output or x (a Python scalar, or a JAX array with weak_type=True) takes the
  other operand's dtype, as in `jnp.where`; two strongly typed operands of different dtypes, or a
  weak one JAX would promote past the other's dtype, are a TypeError.
- `jt.implementation(...)` reports its own errors; `jt.threshold`'s value gets the library's
  message; a source tree that shadows the installed package is named as the reason "ffi" is
  missing.
"""

import importlib.metadata
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading

from absl.testing import absltest
from absl.testing import parameterized
import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np

import jax_threshold as jt
from jax_threshold import lowering
from jax_threshold import ffi
import dtype_lists
import implementations
import oracle


def _bits_equal(actual, expected):
  actual, expected = np.asarray(actual), np.asarray(expected)
  assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
  np.testing.assert_array_equal(oracle.bits(actual), oracle.bits(expected))


@implementations.for_each_implementation
class WeakTypeTest(parameterized.TestCase):
  @parameterized.parameters(*dtype_lists.NARROW_FLOATS)
  def test_python_float_grad_takes_x_dtype(self, dtype):
    x = np.array([0.2, 0.5, 1.2, -3.0], dtype)
    expected = oracle.threshold_backward(np.ones(4, dtype), x, 0.5)
    _bits_equal(jt.threshold_backward(1.0, x, 0.5), expected)
    _bits_equal(jax.jit(lambda x: jt.threshold_backward(1.0, x, 0.5))(x), expected)

  def test_python_float_grad_under_x64(self):
    x = np.array([0.2, 0.5, 1.2], np.float32)
    with jax.enable_x64(True):
      out = jt.threshold_backward(1.0, x, 0.5)
    _bits_equal(out, np.array([0, 0, 1], np.float32))

  def test_python_int_grad_takes_integer_and_float_dtypes(self):
    for dtype in dtype_lists.CANONICAL:
      with self.subTest(dtype=dtype):
        x = np.array([1, 3, 5], dtype)
        _bits_equal(jt.threshold_backward(2, x, 2), np.array([0, 2, 2], dtype))

  def test_weak_jax_array_takes_the_other_dtype(self):
    g = jnp.asarray(3.0)  # weak_type=True
    self.assertTrue(jax.typeof(g).weak_type)
    x = np.array([0.0, 1.0], ml_dtypes.bfloat16)
    _bits_equal(jt.threshold_backward(g, x, 0.5), np.array([0, 3], ml_dtypes.bfloat16))
    traced = jax.jit(lambda g, x: jt.threshold_backward(g * 2, x, 0.5))(g, x)  # weak tracer
    _bits_equal(traced, np.array([0, 6], ml_dtypes.bfloat16))

  def test_weak_x_takes_grad_output_dtype(self):
    g = np.array([4.0, 5.0], np.float16)
    _bits_equal(jt.threshold_backward(g, 1.0, 0.5), g)
    _bits_equal(jt.threshold_backward(g, 0.25, 0.5), np.zeros(2, np.float16))

  def test_both_weak(self):
    _bits_equal(jt.threshold_backward(1, 2.0, 0.5), np.float32(1))

  def test_gradient_of_a_scalar_grad(self):
    # jax.grad hands weakly typed cotangents around; threshold_backward must take them.
    x = jnp.array([0.2, 0.7], jnp.bfloat16)
    out = jax.grad(lambda g: jt.threshold_backward(g, x, 0.5).astype(jnp.float32).sum())(1.0)
    self.assertEqual(float(out), 1.0)

  def test_two_strong_dtypes_are_an_error(self):
    with self.assertRaisesRegex(TypeError, "grad_output float32 and x bfloat16"):
      jt.threshold_backward(np.ones(2, np.float32), np.ones(2, ml_dtypes.bfloat16), 0.5)
    with self.assertRaisesRegex(TypeError, "grad_output float32 and x float16"):
      jt.threshold_backward(jnp.ones(2, jnp.float32), jnp.ones(2, jnp.float16), 0.5)

  def test_weak_float_does_not_take_an_integer_dtype(self):
    with self.assertRaisesRegex(TypeError, "weakly typed grad_output.*x's dtype int8"):
      jt.threshold_backward(1.5, np.array([1, 2], np.int8), 1)

  def test_weak_operand_against_an_unsupported_dtype_names_it(self):
    bad = dtype_lists.UNSUPPORTED_INTEGER
    with self.assertRaisesRegex(TypeError, f"unsupported dtype {bad.name}"):
      jt.threshold_backward(1.0, np.array([1, 2], bad), 1)


class MessageTest(absltest.TestCase):
  def test_implementation_block_errors_are_its_own(self):
    with self.assertRaises(ValueError) as cm:
      with jt.implementation("Reference"):
        pass
    message = str(cm.exception)
    self.assertTrue(message.startswith("jax_threshold.implementation:"), message)
    self.assertNotIn("threshold_backward:", message)
    self.assertIn("did you mean 'reference'?", message)

  def test_call_errors_keep_their_prefix(self):
    x = np.zeros(2, np.float32)
    with self.assertRaisesRegex(ValueError, "^threshold_backward: unknown implementation 'Auto'"):
      jt.threshold_backward(x, x, 0.0, implementation="Auto")

  def test_value_that_is_not_a_number(self):
    x = np.zeros(3, np.float32)
    for value in ("a", None, object()):
      with self.subTest(value=value):
        with self.assertRaisesRegex(TypeError, "^threshold: value must be a real number"):
          jt.threshold(x, 0.0, value)


class DocumentedRulesTest(parameterized.TestCase):
  """The rules docs/behaviour.md states for the questions users ask."""

  @parameterized.parameters(*((i,) for i in implementations.IMPLEMENTATIONS))
  def test_forward_nan_gives_value(self, impl):
    x = np.array([np.nan, -np.nan, 1.0, 0.0], np.float32)
    out = jt.threshold(x, 0.5, 7.0, implementation=impl)
    np.testing.assert_array_equal(out, np.array([7.0, 7.0, 1.0, 7.0], np.float32))

  @parameterized.product(
    impl=implementations.IMPLEMENTATIONS,
    dtype=dtype_lists.CANONICAL,
  )
  def test_nan_threshold_lets_nothing_pass(self, impl, dtype):
    with np.errstate(invalid="ignore"):
      x = np.array([-np.inf, -1, 0, 1, 100, np.inf, np.nan], np.float64).astype(dtype)
    g = np.ones(x.shape, dtype)
    for t in (np.nan, np.float32(np.nan), jnp.float32(np.nan)):
      out = jt.threshold_backward(g, x, t, implementation=impl)
      np.testing.assert_array_equal(oracle.bits(np.asarray(out)), oracle.bits(np.zeros_like(g)))

  def test_float64_numpy_input_becomes_float32_without_x64(self):
    x = np.array([0.25, 1e-300, 2.0], np.float64)
    self.assertEqual(jt.threshold_backward(x, x, 0.5).dtype, np.float32)
    with jax.enable_x64(True):
      out = jt.threshold_backward(x, x, 1e-301)
      self.assertEqual(out.dtype, np.float64)
      np.testing.assert_array_equal(out, x)  # 1e-300 > 1e-301 in float64

  def test_implementation_block_is_thread_local(self):
    x = np.ones(2, np.float32)
    seen = {}

    def implementation_in_jaxpr(key):
      jaxpr = jax.make_jaxpr(lambda x: jt.threshold_backward(x, x, 0.5))(x)
      seen[key] = jaxpr.eqns[-1].params["implementation"]

    default = lowering.default_implementation()
    block = "reference" if default != "reference" else "auto"
    with jt.implementation(block):
      implementation_in_jaxpr("inside")
      worker = threading.Thread(target=implementation_in_jaxpr, args=("thread",))
      worker.start()
      worker.join(timeout=60)
    self.assertEqual(seen["inside"], block)
    self.assertEqual(seen["thread"], default)

  @parameterized.parameters(*((i,) for i in implementations.IMPLEMENTATIONS))
  def test_gradient_with_respect_to_the_threshold_is_zero(self, impl):
    g = np.array([1.0, 2.0, 3.0], np.float32)
    x = np.array([0.4, 0.5, 0.6], np.float32)
    d_t = jax.grad(lambda t: jt.threshold_backward(g, x, t, implementation=impl).sum())(0.5)
    self.assertEqual(float(d_t), 0.0)
    d_t = jax.grad(lambda t: jt.threshold(x, t, 1.0, implementation=impl).sum())(0.5)
    self.assertEqual(float(d_t), 0.0)


class SourceTreeShadowingTest(absltest.TestCase):
  """`pip install .`, then `python` in the checkout: the checkout's package has no _native."""

  def _make_layout(self, root):
    """A fake installed distribution in root/site and a bare source tree in root/checkout."""
    package = pathlib.Path(ffi.__file__).parent
    site, checkout = root / "site", root / "checkout"
    (site / "jax_threshold").mkdir(parents=True)
    (site / "jax_threshold" / "_native.abi3.so").write_bytes(b"")
    info = site / "jax_threshold-0.0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: jax-threshold\nVersion: 0.0.0\n")
    (info / "RECORD").write_text(
      "jax_threshold/_native.abi3.so,,\njax_threshold-0.0.0.dist-info/METADATA,,\n"
    )
    (checkout / "jax_threshold").mkdir(parents=True)
    for source in package.glob("*.py"):
      shutil.copy(source, checkout / "jax_threshold" / source.name)
    return site, checkout

  def _run(self, cwd, site, code):
    env = dict(os.environ, PYTHONPATH=str(site), JAX_PLATFORMS="cpu")
    return subprocess.run(
      [sys.executable, "-c", textwrap.dedent(code)],
      cwd=cwd,
      env=env,
      capture_output=True,
      text=True,
      timeout=240,
      check=False,
    )

  def test_the_reason_names_the_shadowing_tree(self):
    with tempfile.TemporaryDirectory() as tmp:
      site, checkout = self._make_layout(pathlib.Path(tmp))
      proc = self._run(
        checkout,
        site,
        """
          import numpy as np, jax_threshold as jt
          assert "ffi" not in jt.available_implementations()
          try:
            jt.threshold_backward(np.ones(2, np.float32), np.ones(2, np.float32), 0.0,
                                  implementation="ffi")
          except ValueError as e:
            print(e)
          """,
      )
      self.assertEqual(proc.returncode, 0, proc.stderr)
      self.assertIn(
        "the source tree in the current directory shadows the installed "
        "jax-threshold; run from another directory",
        proc.stdout,
      )
      self.assertNotIn("pip install .", proc.stdout)

  def test_no_installed_distribution_keeps_the_build_hint(self):
    try:
      importlib.metadata.distribution(ffi.DISTRIBUTION)
      self.skipTest("jax-threshold is installed here")
    except importlib.metadata.PackageNotFoundError:
      pass
    with tempfile.TemporaryDirectory() as tmp:
      site, checkout = self._make_layout(pathlib.Path(tmp))
      shutil.rmtree(site / "jax_threshold-0.0.0.dist-info")
      proc = self._run(
        checkout,
        site,
        """
          import jax_threshold
          from jax_threshold import ffi
          print(ffi.source_tree_shadowing())
          """,
      )
      self.assertEqual(proc.returncode, 0, proc.stderr)
      self.assertEqual(proc.stdout.strip(), "None")

  def test_the_installed_package_itself_is_not_shadowed(self):
    if "ffi" in jt.available_implementations():
      self.assertIsNone(ffi.source_tree_shadowing())


if __name__ == "__main__":
  absltest.main()
