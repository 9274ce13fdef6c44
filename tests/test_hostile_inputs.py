"""Hostile inputs on the JAX side: subnormals, symbolic shapes, high ranks, big vmap
batches of thresholds, and shapes that overflow or lie.

- Subnormals are numbers (docs/behaviour.md §1) on every path, although XLA's CPU threads run
  with flush-to-zero / denormals-are-zero: the reference compares floats only against thresholds
  a flushed subnormal cannot cross and the bits as integers otherwise (test_compare_forms.py),
  the FFI handler clears the flush bits around its work.
- jax.export with a symbolic batch dim, on both implementations.
- Any rank JAX accepts (NumPy's shape helpers stop at 32).
- vmap over many thresholds through the custom call: small memory, bits as the reference's
  (which path runs, per call, is test_batch_transpose.py's).
- A direct custom call whose declared result is not the broadcast shape; a broadcast whose
  size overflows int64.
"""

import os
import subprocess
import sys
import textwrap

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax import export
import jax.numpy as jnp
import ml_dtypes
import numpy as np

import jax_threshold as jt
from jax_threshold import aclnn
from jax_threshold import _threshold
import dtype_lists
import implementations
import oracle

HAS_FFI = "ffi" in jt.available_implementations()
SKIP_REASON = "the native extension with the XLA FFI handler is not built"
IMPLS = implementations.IMPLEMENTATIONS

F32_MIN_SUBNORMAL = float(np.finfo(np.float32).smallest_subnormal)  # 1.4e-45
F64_MIN_SUBNORMAL = float(np.finfo(np.float64).smallest_subnormal)  # 4.9e-324


def _both_ways(impl):
  """threshold_backward eagerly and under jit (a traced threshold: the operand target)."""
  eager = lambda g, x, t: jt.threshold_backward(g, x, t, implementation=impl)
  return eager, jax.jit(eager)


def _assert_bits_equal(actual, expected):
  np.testing.assert_array_equal(oracle.bits(np.asarray(actual)), oracle.bits(np.asarray(expected)))


class SubnormalTest(parameterized.TestCase):
  """x > threshold by value for subnormal x and thresholds, on every path."""

  def _check(self, impl, dtype, x_values, threshold, threshold_dtype=np.float32):
    x = np.array(x_values, dtype)
    g = np.arange(1, x.size + 1).astype(dtype)
    expected = oracle.threshold_backward(g, x, threshold)
    for f in _both_ways(impl):
      _assert_bits_equal(f(g, x, threshold), expected)
    _assert_bits_equal(
      jax.jit(lambda g, x, t: jt.threshold_backward(g, x, t, implementation=impl))(
        g, x, threshold_dtype(threshold)
      ),
      expected,
    )
    return expected

  @parameterized.product(impl=IMPLS)
  def test_float32_subnormal_x_against_zero(self, impl):
    expected = self._check(impl, np.float32, [1e-40, -1e-40, F32_MIN_SUBNORMAL, 0.0, -0.0], 0.0)
    np.testing.assert_array_equal(expected, [1, 0, 3, 0, 0])  # the oracle itself: 1e-40 > 0

  @parameterized.product(impl=IMPLS, threshold=[1.5e-40, -1.5e-40, F32_MIN_SUBNORMAL, -0.0])
  def test_float32_subnormal_thresholds(self, impl, threshold):
    self._check(
      impl,
      np.float32,
      [1e-40, 2e-40, -1e-40, -2e-40, F32_MIN_SUBNORMAL, 0.0, 1.0, np.nan],
      threshold,
    )

  @parameterized.product(impl=IMPLS, threshold=[0.0, 3e-8, -3e-8])
  def test_float16_subnormals_widen(self, impl, threshold):
    tiny = float(np.finfo(np.float16).smallest_subnormal)  # 6e-8
    self._check(impl, np.float16, [tiny, -tiny, 2 * tiny, 0.0, -0.0, 1e-5], threshold)

  @parameterized.product(impl=IMPLS, threshold=[0.0, 1.5e-39, -1.5e-39])
  def test_bfloat16_subnormals_widen(self, impl, threshold):
    self._check(impl, ml_dtypes.bfloat16, [1e-39, 2e-39, -1e-39, -2e-39, 0.0, 1e-30], threshold)

  @parameterized.product(impl=IMPLS)
  def test_integer_x_with_a_negative_subnormal_threshold(self, impl):
    # floor(-1e-40) is -1, so 0 > -1e-40; a flushed threshold would be -0 with floor 0.
    x = np.array([-1, 0, 1], np.int32)
    g = np.array([5, 6, 7], np.int32)
    out = jax.jit(lambda g, x, t: jt.threshold_backward(g, x, t, implementation=impl))(
      g, x, jnp.float32(-1e-40)
    )
    np.testing.assert_array_equal(out, [0, 6, 7])

  @parameterized.product(impl=IMPLS, threshold=[0.0, 5e-311, -5e-311])
  def test_float64_subnormals(self, impl, threshold):
    with jax.enable_x64(True):
      self._check(
        impl,
        np.float64,
        [1e-310, -1e-310, F64_MIN_SUBNORMAL, 0.0, -0.0, 1e-300],
        threshold,
        threshold_dtype=np.float64,
      )

  @parameterized.product(impl=IMPLS, threshold=[1.5e-40, -1.5e-40, 1e-45])
  def test_traced_float64_threshold_rounds_to_a_float32_subnormal(self, impl, threshold):
    # The traced conversion float64 -> float32 runs on XLA's threads: it must not flush.
    with jax.enable_x64(True):
      x = np.array([1e-40, 2e-40, -1e-40, -2e-40, F32_MIN_SUBNORMAL, 0.0], np.float32)
      g = np.arange(1, x.size + 1).astype(np.float32)
      out = jax.jit(lambda g, x, t: jt.threshold_backward(g, x, t, implementation=impl))(
        g, x, np.float64(threshold)
      )
      _assert_bits_equal(out, oracle.threshold_backward(g, x, threshold))

  @parameterized.product(impl=IMPLS, threshold=[1e-40, -1e-40])
  def test_traced_float32_subnormal_threshold_for_float64_x(self, impl, threshold):
    with jax.enable_x64(True):
      t32 = np.float32(threshold)
      x = np.array([float(t32) * 0.5, float(t32), float(t32) * 1.5, 0.0], np.float64)
      g = np.arange(1, x.size + 1).astype(np.float64)
      out = jax.jit(lambda g, x, t: jt.threshold_backward(g, x, t, implementation=impl))(g, x, t32)
      _assert_bits_equal(out, np.where(x > float(t32), g, 0.0))

  @parameterized.product(impl=IMPLS)
  def test_large_arrays_in_several_blocks(self, impl):
    # Kernel blocks run on XLA's calling thread (flush-to-zero set) and the executor's workers.
    rng = np.random.default_rng(10)
    x = (rng.standard_normal(300_001) * 1e-39).astype(np.float32)
    g = rng.standard_normal(300_001).astype(np.float32)
    for threshold in (0.0, 1e-40):
      out = jax.jit(lambda g, x, t: jt.threshold_backward(g, x, t, implementation=impl))(
        g, x, jnp.float32(threshold)
      )
      _assert_bits_equal(out, np.where(x > np.float32(threshold), g, np.float32(0)))

  @parameterized.product(impl=IMPLS)
  def test_vmap_over_subnormal_thresholds(self, impl):
    x = np.array([1e-40, 2e-40, -1e-40, 0.0], np.float32)
    g = np.array([1, 2, 3, 4], np.float32)
    ts = np.array([0.0, -0.0, 1.5e-40, -1.5e-40, 3e-40], np.float32)
    out = jax.jit(jax.vmap(lambda t: jt.threshold_backward(g, x, t, implementation=impl)))(ts)
    _assert_bits_equal(out, np.where(x[None, :] > ts[:, None], g, np.float32(0)))

  @parameterized.product(impl=IMPLS)
  def test_gradient_of_threshold_at_a_subnormal(self, impl):
    # jax.nn.relu's gradient flushes 1e-40 to 0 on CPU (README); ours passes it.
    grad = jax.jit(jax.grad(lambda x: jt.threshold(x, 0.0, 0.0, implementation=impl)))
    self.assertEqual(float(grad(jnp.float32(1e-40))), 1.0)
    self.assertEqual(float(grad(jnp.float32(-1e-40))), 0.0)

  def test_executor(self):
    if not hasattr(aclnn, "threshold_backward_get_workspace_size") or not HAS_FFI:
      self.skipTest(SKIP_REASON)
    x = np.array([1e-40, -1e-40, 0.0], np.float32)
    g = np.array([1, 2, 3], np.float32)
    out = np.zeros(3, np.float32)
    status, size, executor = aclnn.threshold_backward_get_workspace_size(g, x, 0.0, out, soc="host")
    self.assertEqual(status, aclnn.ACLNN_SUCCESS)
    workspace = np.zeros(size, np.uint8) if size else None
    self.assertEqual(aclnn.threshold_backward(workspace, size, executor), aclnn.ACLNN_SUCCESS)
    np.testing.assert_array_equal(out, [1, 0, 0])


class FlushProofConversionTest(parameterized.TestCase):
  """jax_threshold._threshold's conversions keep subnormals under jit on XLA's CPU threads."""

  def test_float64_to_float32_rounds_once(self):
    tiny = F32_MIN_SUBNORMAL
    values = np.array(
      [
        1.5e-40,
        -1.5e-40,
        tiny,
        tiny / 2,
        tiny * 0.75,
        tiny * 2.5,
        tiny * 3.5,
        2.0**-126 - 2.0**-160,
        2.0**-126,
        -0.0,
        0.0,
        F64_MIN_SUBNORMAL,
        1.0,
        -3.5e38,
        1e39,
        np.inf,
        -np.inf,
        np.nan,
      ],
      np.float64,
    )
    with jax.enable_x64(True):
      out = jax.jit(_threshold.to_float32)(values)
    with np.errstate(over="ignore"):  # 1e39 rounds to inf
      _assert_bits_equal(out, values.astype(np.float32))

  @parameterized.parameters(*dtype_lists.NARROW_FLOATS)
  def test_widening_to_float64_is_exact(self, dtype):
    info = ml_dtypes.finfo(dtype)
    tiny = float(info.smallest_subnormal)
    values = np.array(
      [tiny, -tiny, 3 * tiny, float(info.smallest_normal) - tiny, -0.0, 0.0, 1.0, np.inf, np.nan],
      dtype,
    )
    with jax.enable_x64(True):
      out = jax.jit(_threshold.to_float64)(values)
      out32 = jax.jit(_threshold.to_float32)(values)
    _assert_bits_equal(out, values.astype(np.float64))
    _assert_bits_equal(out32, values.astype(np.float32))


class SymbolicShapeExportTest(parameterized.TestCase):
  """jax.export with a symbolic batch dim: serialized once, called with two batch sizes."""

  def _round_trip(self, fn, *specs):
    exported = export.export(
      jax.jit(fn),
      disabled_checks=[export.DisabledSafetyCheck.custom_call(n) for n in jt.ffi_targets()],
    )(*specs)
    return export.deserialize(exported.serialize())

  @parameterized.product(impl=IMPLS)
  def test_gradient_of_threshold(self, impl):
    (b,) = export.symbolic_shape("b")
    grad = jax.grad(lambda x: jt.threshold(x, 0.5, -1.0, implementation=impl).sum())
    exported = self._round_trip(grad, jax.ShapeDtypeStruct((b, 3), jnp.float32))
    for batch in (2, 5):
      x = np.linspace(-1, 2, batch * 3, dtype=np.float32).reshape(batch, 3)
      _assert_bits_equal(exported.call(x), np.where(x > 0.5, np.float32(1), np.float32(0)))

  @parameterized.product(impl=IMPLS)
  def test_threshold_backward_with_broadcasting(self, impl):
    (b,) = export.symbolic_shape("b")
    fn = lambda g, x, t: jt.threshold_backward(g, x, t, implementation=impl)
    exported = self._round_trip(
      fn,
      jax.ShapeDtypeStruct((b, 1), jnp.float32),
      jax.ShapeDtypeStruct((4,), jnp.float32),
      jax.ShapeDtypeStruct((), jnp.float32),
    )
    x = np.array([0.2, 1.2, 2.2, 3.2], np.float32)
    for batch in (1, 3):
      g = np.arange(1, batch + 1, dtype=np.float32)[:, None]
      _assert_bits_equal(exported.call(g, x, np.float32(1.0)), oracle.threshold_backward(g, x, 1.0))

  @parameterized.product(impl=IMPLS)
  def test_vmap_over_a_symbolic_batch_of_thresholds(self, impl):
    (b,) = export.symbolic_shape("b")
    x = np.array([0.2, 1.2, 2.2], np.float32)
    g = np.array([1, 2, 3], np.float32)
    fn = jax.vmap(lambda t: jt.threshold_backward(g, x, t, implementation=impl))
    exported = self._round_trip(fn, jax.ShapeDtypeStruct((b,), jnp.float32))
    for batch in (2, 7):
      ts = np.linspace(0, 2.5, batch, dtype=np.float32)
      _assert_bits_equal(exported.call(ts), np.where(x[None] > ts[:, None], g, np.float32(0)))

  def test_symbolic_dims_that_may_not_broadcast_are_refused(self):
    (b,) = export.symbolic_shape("b")
    with self.assertRaisesRegex(ValueError, r"do not broadcast: grad_output \(b, 2\), x \(3,\)"):
      jax.eval_shape(
        lambda g, x: jt.threshold_backward(g, x, 0.0),
        jax.ShapeDtypeStruct((b, 2), jnp.float32),
        jax.ShapeDtypeStruct((3,), jnp.float32),
      )


class HighRankTest(parameterized.TestCase):
  """Ranks beyond NumPy's 32 (JAX has no limit)."""

  @parameterized.product(impl=IMPLS)
  def test_rank_33_of_ones(self, impl):
    x = np.full((1,) * 33, 0.5, np.float32)
    g = np.full((1,) * 33, 3.0, np.float32)
    out = jt.threshold_backward(g, x, 0.25, implementation=impl)
    self.assertEqual(out.shape, (1,) * 33)
    _assert_bits_equal(out, g)
    grad = jax.grad(lambda x: jt.threshold(x, 0.25, 0.0, implementation=impl).sum())(x)
    _assert_bits_equal(grad, np.ones_like(x))

  @parameterized.product(impl=IMPLS)
  def test_rank_34_with_alternating_broadcasts(self, impl):
    # 17 dims of 2 between dims of 1; g broadcasts along every other 2: the handler cannot
    # merge them to the executor's rank 8 and loops over the rest.
    shape = (2, 1) * 17
    g_shape = tuple(1 if i % 4 == 2 else d for i, d in enumerate(shape))
    rng = np.random.default_rng(34)
    x = rng.standard_normal(shape).astype(np.float32)
    g = rng.standard_normal(g_shape).astype(np.float32)
    out = jax.jit(lambda g, x: jt.threshold_backward(g, x, 0.1, implementation=impl))(g, x)
    self.assertEqual(out.shape, shape)
    _assert_bits_equal(out, np.where(x > np.float32(0.1), np.broadcast_to(g, shape), 0))

  @parameterized.product(impl=IMPLS)
  def test_vmap_over_thresholds_at_rank_33(self, impl):
    x = np.full((1,) * 33, 0.5, np.float32)
    ts = np.array([0.0, 0.5, 1.0], np.float32)
    out = jax.vmap(lambda t: jt.threshold_backward(x, x, t, implementation=impl))(ts)
    self.assertEqual(out.shape, (3,) + (1,) * 33)
    np.testing.assert_array_equal(out.reshape(3), [0.5, 0, 0])


@absltest.skipUnless(HAS_FFI, SKIP_REASON)
class BatchedThresholdTest(parameterized.TestCase):
  """vmap over many thresholds through the custom call (launched along the batch, or per
  threshold with one shared phase-one plan: test_batch_transpose.py)."""

  @parameterized.parameters(*dtype_lists.CANONICAL)
  def test_vmap_over_100k_thresholds_matches_the_reference(self, dtype):
    rng = np.random.default_rng(11)
    if np.issubdtype(dtype, np.integer):
      info = np.iinfo(dtype)
      x = np.array([info.min, 0, 1, 3, info.max], dtype)
      ts = rng.integers(-3, 5, 100_000).astype(np.float32)
      ts[::7] += 0.5  # real thresholds between integers
    else:
      x = np.array([-1.0, 0.0, 1e-40, 0.5, 2.0, np.nan], dtype)
      ts = rng.standard_normal(100_000).astype(np.float32)
    ts[::5] = 0.0  # every fifth one exactly 0: the ReluGrad plan
    ts[1::10] = -0.0
    g = np.arange(1, x.size + 1).astype(dtype)
    outs = [
      jax.jit(jax.vmap(lambda t, impl=impl: jt.threshold_backward(g, x, t, implementation=impl)))(
        ts
      )
      for impl in ("reference", "ffi")
    ]
    _assert_bits_equal(outs[1], outs[0])
    _assert_bits_equal(
      outs[1][:50], np.stack([oracle.threshold_backward(g, x, t) for t in ts[:50]])
    )

  def test_vmap_over_thresholds_and_x(self):
    rng = np.random.default_rng(12)
    x = rng.standard_normal((20_000, 3)).astype(np.float32)
    g = rng.standard_normal((20_000, 1)).astype(np.float32)  # broadcast inside each slice
    ts = rng.standard_normal(20_000).astype(np.float32)
    ts[::3] = 0.0
    outs = [
      jax.jit(
        jax.vmap(lambda g, x, t, impl=impl: jt.threshold_backward(g, x, t, implementation=impl))
      )(g, x, ts)
      for impl in ("reference", "ffi")
    ]
    _assert_bits_equal(outs[1], outs[0])

  def test_peak_memory_stays_small(self):
    # 10^6 thresholds on 3 elements: the custom call needs about what the reference needs, not
    # an executor per element (~2 GB). Generous bound.
    code = textwrap.dedent("""
        import resource, jax, jax.numpy as jnp, numpy as np
        import jax_threshold as jt
        x = jnp.array([0.5, 1.5, 2.5], jnp.float32)
        ts = jnp.linspace(-1, 3, 1_000_000, dtype=jnp.float32)
        def run(impl):
          f = jax.jit(jax.vmap(lambda t: jt.threshold_backward(x, x, t, implementation=impl)))
          return np.asarray(f(ts))
        ref = run("reference")
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        out = run("ffi")
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        assert (out.view(np.uint32) == ref.view(np.uint32)).all()
        print((after - before) // 1024)
    """)
    env = dict(os.environ)
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(jt.__file__)))
    env["PYTHONPATH"] = os.pathsep.join([package_root, env.get("PYTHONPATH", "")])
    proc = subprocess.run(
      [sys.executable, "-c", code],
      env=env,
      capture_output=True,
      text=True,
      timeout=300,
      check=False,
      cwd=package_root,
    )
    self.assertEqual(proc.returncode, 0, proc.stderr[-3000:])
    growth_mib = int(proc.stdout.split()[-1])
    self.assertLess(growth_mib, 400, f"peak RSS grew by {growth_mib} MiB")


class ShapeErrorTest(parameterized.TestCase):
  def test_a_broadcast_that_overflows_int64_says_so(self):
    with self.assertRaisesRegex(ValueError, r"overflows int64"):
      jax.eval_shape(
        lambda g, x: jt.threshold_backward(g, x, 0.0),
        jax.ShapeDtypeStruct((2**40, 1), jnp.float32),
        jax.ShapeDtypeStruct((1, 2**40), jnp.float32),
      )

  def test_shapes_that_do_not_broadcast_name_both(self):
    with self.assertRaisesRegex(ValueError, r"do not broadcast: grad_output \(2, 3\), x \(4,\)"):
      jt.threshold_backward(jnp.ones((2, 3)), jnp.ones((4,)), 0.0)

  @absltest.skipUnless(HAS_FFI, SKIP_REASON)
  def test_direct_custom_call_with_a_result_of_the_wrong_shape(self):
    # has_side_effect: XLA would otherwise drop a call whose result has no elements unrun.
    g = x = jnp.ones((4,), jnp.float32)

    def call(out_shape, **kwargs):
      f = jax.ffi.ffi_call(
        jt.ffi_targets()[0], jax.ShapeDtypeStruct(out_shape, jnp.float32), **kwargs
      )
      return jax.jit(lambda *a: f(*a, relu_grad=False))

    for out_shape in [(0,), (0, 4), (2, 4)]:
      with self.assertRaisesRegex(Exception, r"result's shape .* is not the broadcast shape \[4\]"):
        jax.block_until_ready(call(out_shape, has_side_effect=True)(g, x, jnp.float32(0.5)))
    with self.assertRaisesRegex(Exception, r"not the broadcast shape \[3,4\]"):
      jax.block_until_ready(call((2, 3, 4))(g, x, jnp.zeros((3, 1), jnp.float32)))


if __name__ == "__main__":
  absltest.main()
