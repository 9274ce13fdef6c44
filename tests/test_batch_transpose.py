"""A vmap over many thresholds on a small x, launched along the batch axis (ffi.py).

Which calls take the rewrite (read off the lowered module: a custom call of shape (N, B)), and
that every dtype, threshold dtype and special value gives the reference's bits and the oracle's,
on the rewritten path and on the per-threshold path it replaces.
"""

import re

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax import export
import jax.numpy as jnp
import numpy as np

import jax_threshold as jt
from jax_threshold import ffi
import dtype_lists
import oracle

HAS_FFI = "ffi" in jt.available_implementations()
SKIP_REASON = "the native extension with the XLA FFI handler is not built"

_CALL = re.compile(
  r"stablehlo\.custom_call @jax_threshold_threshold_backward_v2\(.*?"
  r"-> tensor<([0-9?x]+)x[a-z0-9]+>"
)


def _call_shapes(fn, *args):
  """The result shapes of the module's threshold_backward custom calls."""
  text = fn.mlir_module() if hasattr(fn, "mlir_module") else jax.jit(fn).lower(*args).as_text()
  return [tuple(d if d == "?" else int(d) for d in m.split("x")) for m in _CALL.findall(text)]


def _run(g, x, ts, impl, g_batched=False):
  fn = jax.vmap(
    lambda g, t: jt.threshold_backward(g, x, t, implementation=impl),
    in_axes=(0 if g_batched else None, 0),
  )
  return np.asarray(jax.jit(fn)(g, ts)), _call_shapes(fn, g, ts)


def _assert_bits_equal(actual, expected):
  np.testing.assert_array_equal(oracle.bits(np.asarray(actual)), oracle.bits(np.asarray(expected)))


def _float_case(dtype, threshold_dtype, count, rng):
  x = np.array(
    [-1.0, -0.0, 0.0, 1e-40, -1e-40, 0.5, 2.0, np.nan, np.inf, -np.inf, 6e-8, -6e-8], dtype
  )
  g = np.array([1, -2, np.nan, np.inf, -0.0, 3, 4, 5, 6, 7, 1e-40, 6e-8], dtype)
  ts = rng.standard_normal(count).astype(threshold_dtype)
  for k, v in enumerate([0.0, -0.0, np.nan, np.inf, -np.inf, 1e-40, -1e-40, 0.5, 6e-8, 2.0]):
    ts[k :: 11 + 2 * k] = v
  return g, x, ts


def _integer_case(dtype, threshold_dtype, count, rng):
  info = np.iinfo(dtype)
  x = np.array([info.min, info.min + 1, max(-1, info.min), 0, 1, 3, info.max - 1, info.max], dtype)
  g = np.arange(1, x.size + 1).astype(dtype)
  g[0], g[1] = info.max, info.min
  if np.issubdtype(threshold_dtype, np.integer):
    ts = rng.integers(info.min, info.max, count, endpoint=True, dtype=dtype)
    ts[::3], ts[1::3], ts[2::5] = info.min, info.max, 0
    return g, x, ts
  ts = (rng.standard_normal(count) * 3).astype(threshold_dtype)
  ts[::7] = np.round(ts[::7])
  specials = [
    0.0,
    np.nan,
    np.inf,
    -np.inf,
    float(info.min) - 0.5,
    float(info.max) + 0.5,
    float(info.min) - 1,
    -1e-40,
    1e-40,
    float(info.max),
    float(info.min),
  ]
  for k, v in enumerate(specials):
    ts[k :: 13 + 2 * k] = v
  return g, x, ts


@absltest.skipUnless(HAS_FFI, SKIP_REASON)
class WhichCallsAreRewrittenTest(parameterized.TestCase):
  def test_a_small_x_is_launched_along_the_batch(self):
    x = jnp.array([0.5, 1.5, 2.5], jnp.float32)
    ts = jnp.zeros(10_000, jnp.float32)
    fn = jax.vmap(lambda t: jt.threshold_backward(x, x, t, implementation="ffi"))
    self.assertEqual(_call_shapes(fn, ts), [(3, 10_000)])

  @parameterized.named_parameters(
    ("too_many_elements_per_threshold", 300, 100_000),
    ("too_few_thresholds_per_element", 3, 40),
  )
  def test_the_size_rule(self, elements, thresholds):
    x = jnp.ones(elements, jnp.float32)
    ts = jnp.zeros(thresholds, jnp.float32)
    fn = jax.vmap(lambda t: jt.threshold_backward(x, x, t, implementation="ffi"))
    self.assertEqual(_call_shapes(fn, ts), [(thresholds, elements)])

  def test_x_batched_with_the_threshold_keeps_one_launch_per_threshold(self):
    xs = jnp.ones((1000, 3), jnp.float32)
    ts = jnp.zeros(1000, jnp.float32)
    fn = jax.vmap(lambda x, t: jt.threshold_backward(x, x, t, implementation="ffi"))
    self.assertEqual(_call_shapes(fn, xs, ts), [(1000, 3)])

  def test_int32_x_with_a_real_threshold_needs_x64(self):
    x = jnp.array([1, 2, 3], jnp.int32)
    ts = jnp.zeros(1000, jnp.float32)
    fn = jax.vmap(lambda t: jt.threshold_backward(x, x, t, implementation="ffi"))
    self.assertEqual(_call_shapes(fn, ts), [(1000, 3)])
    with jax.enable_x64(True):
      self.assertEqual(_call_shapes(fn, ts), [(3, 1000)])

  def test_int64_x_with_a_real_threshold_is_not_rewritten(self):
    with jax.enable_x64(True):
      x = jnp.array([1, 2, 3], jnp.int64)
      ts = jnp.zeros(1000, jnp.float64)
      fn = jax.vmap(lambda t: jt.threshold_backward(x, x, t, implementation="ffi"))
      self.assertEqual(_call_shapes(fn, ts), [(1000, 3)])

  def test_a_symbolic_batch_is_not_rewritten(self):
    x = jnp.array([0.5, 1.5, 2.5], jnp.float32)
    fn = jax.vmap(lambda t: jt.threshold_backward(x, x, t, implementation="ffi"))
    (b,) = export.symbolic_shape("b")
    exported = export.export(
      jax.jit(fn),
      disabled_checks=[export.DisabledSafetyCheck.custom_call(t) for t in jt.ffi_targets()],
    )(jax.ShapeDtypeStruct((b,), jnp.float32))
    self.assertEqual(_call_shapes(exported), [("?", 3)])
    ts = np.linspace(-1, 3, 500).astype(np.float32)
    _assert_bits_equal(
      exported.call(ts),
      jax.vmap(lambda t: jt.threshold_backward(x, x, t, implementation="reference"))(ts),
    )


@absltest.skipUnless(HAS_FFI, SKIP_REASON)
class BitsTest(parameterized.TestCase):
  """The rewritten call, the per-threshold call and the reference agree bit for bit."""

  def _check(self, g, x, ts, g_batched, expect_rewrite):
    out, shapes = _run(g, x, ts, "ffi", g_batched)
    self.assertEqual(shapes, [(x.size, ts.size)] if expect_rewrite else [(ts.size, x.size)])
    reference, _ = _run(g, x, ts, "reference", g_batched)
    _assert_bits_equal(out, reference)
    for b in range(0, ts.size, 97):  # the independent oracle on a sample
      _assert_bits_equal(out[b], oracle.threshold_backward(g[b] if g_batched else g, x, ts[b]))
    saved = ffi.MAX_ELEMENTS_PER_THRESHOLD
    ffi.MAX_ELEMENTS_PER_THRESHOLD = 0  # the per-threshold launches
    try:
      per_threshold, shapes = _run(g, x, ts, "ffi", g_batched)
    finally:
      ffi.MAX_ELEMENTS_PER_THRESHOLD = saved
    self.assertEqual(shapes, [(ts.size, x.size)])
    _assert_bits_equal(per_threshold, reference)

  @parameterized.product(dtype=dtype_lists.NARROW_FLOATS, g_batched=[False, True])
  def test_narrow_floats(self, dtype, g_batched):
    rng = np.random.default_rng(1)
    g, x, ts = _float_case(dtype, np.float32, 3000, rng)
    if g_batched:
      g = (rng.standard_normal((ts.size, x.size)) * 1e-38).astype(dtype)
    self._check(g, x, ts, g_batched, expect_rewrite=True)

  @parameterized.parameters(False, True)
  def test_float64(self, g_batched):
    with jax.enable_x64(True):
      rng = np.random.default_rng(2)
      g, x, ts = _float_case(np.float64, np.float64, 3000, rng)
      x[3], ts[5] = 4e-320, 4e-320  # float64 subnormals
      if g_batched:
        g = rng.standard_normal((ts.size, x.size))
      self._check(g, x, ts, g_batched, expect_rewrite=True)

  @parameterized.product(
    dtype=dtype_lists.CANONICAL_INTEGERS,
    threshold_dtype=["own", np.float32, np.float64],
    g_batched=[False, True],
  )
  def test_integers(self, dtype, threshold_dtype, g_batched):
    own = isinstance(threshold_dtype, str)
    with jax.enable_x64(True):  # float64 thresholds, and int32 x with a real threshold
      rng = np.random.default_rng(3)
      g, x, ts = _integer_case(dtype, dtype if own else threshold_dtype, 3000, rng)
      if g_batched:
        g = np.tile(g, (ts.size, 1))
        g[::2] = g[::2][:, ::-1]
      self._check(g, x, ts, g_batched, expect_rewrite=True)

  def test_int64(self):
    with jax.enable_x64(True):
      rng = np.random.default_rng(4)
      g, x, ts = _integer_case(np.int64, np.int64, 3000, rng)
      self._check(g, x, ts, False, expect_rewrite=True)
      g, x, ts = _integer_case(np.int64, np.float64, 3000, rng)
      self._check(g, x, ts, False, expect_rewrite=False)

  def test_uint8_with_a_real_threshold_outside_x64(self):
    rng = np.random.default_rng(5)
    g, x, ts = _integer_case(np.uint8, np.float32, 3000, rng)
    self._check(g, x, ts, False, expect_rewrite=True)


@absltest.skipUnless(HAS_FFI, SKIP_REASON)
class ShapesAndTransformsTest(absltest.TestCase):
  def test_two_batch_dims_and_a_two_dim_x(self):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    g = rng.standard_normal((1, 3)).astype(np.float32)  # broadcast inside x's shape
    ts = rng.standard_normal((40, 50)).astype(np.float32)
    f = lambda impl: jax.jit(
      jax.vmap(jax.vmap(lambda t: jt.threshold_backward(g, x, t, implementation=impl)))
    )
    self.assertEqual(_call_shapes(f("ffi"), ts), [(6, 2000)])
    _assert_bits_equal(f("ffi")(ts), f("reference")(ts))

  def test_threshold_and_grad_batched_along_different_axes(self):
    # The threshold is (2000, 1, 1) against out (2000, 30, 3): grad_output's batch axis is
    # inside each threshold's slice, so the launches are 90 of 2000 elements.
    rng = np.random.default_rng(7)
    x = rng.standard_normal(3).astype(np.float32)
    gs = rng.standard_normal((30, 3)).astype(np.float32)
    ts = rng.standard_normal(2000).astype(np.float32)
    inner = lambda impl: jax.vmap(
      lambda g, t: jt.threshold_backward(g, x, t, implementation=impl), in_axes=(0, None)
    )
    f = lambda impl: jax.jit(jax.vmap(inner(impl), in_axes=(None, 0)))
    self.assertEqual(_call_shapes(f("ffi"), gs, ts), [(90, 2000)])
    _assert_bits_equal(f("ffi")(gs, ts), f("reference")(gs, ts))

  def test_per_example_gradients_over_thresholds(self):
    x = jnp.array([-1.0, 0.25, 0.5, 3.0], jnp.float32)
    ts = jnp.linspace(-2, 4, 1000, dtype=jnp.float32)
    loss = lambda impl: lambda x, t: jnp.sum(jt.threshold(x, t, -1.0, implementation=impl) ** 2)
    f = lambda impl: jax.jit(jax.vmap(jax.grad(loss(impl)), in_axes=(None, 0)))
    _assert_bits_equal(f("ffi")(x, ts), f("reference")(x, ts))


if __name__ == "__main__":
  absltest.main()
