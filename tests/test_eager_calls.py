"""Un-jitted calls: jit's cached dispatch, no eager copies, and the fast threshold operand.

No timing here (benchmarks/bench_eager.py measures the cost): what is checked is what the cost
rests on -- an eager call reuses one compiled body whatever the threshold's value, NumPy inputs
reach it without an eager copy (so `jax.debug_nans` / `jax.debug_infs` judge only the result,
as for `jnp.where`), and a Python float or int threshold gives the operand its exact value gives.
"""

from fractions import Fraction
import math

from absl.testing import absltest
from absl.testing import parameterized
import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np

import jax_threshold as jt
from jax_threshold import _threshold
from jax_threshold import api

import dtype_lists
import implementations
import oracle

_DEBUG_FLAGS = (("nans", jax.debug_nans), ("infs", jax.debug_infs))


def _bits(a):
  return oracle.bits(np.asarray(a))


class EagerDispatchTest(parameterized.TestCase):
  def test_new_threshold_values_reuse_the_compiled_body(self):
    g = jnp.arange(8, dtype=jnp.float32)
    x = g - 3.5
    jt.threshold_backward(g, x, 0.5)
    jt.threshold(x, 0.5, 0.0)
    backward, forward = api._threshold_backward._cache_size(), api._threshold_forward._cache_size()
    for t in (0.25, -1.0, 3, 1e-3, math.inf):
      expected = oracle.threshold_backward(np.asarray(g), np.asarray(x), t)
      np.testing.assert_array_equal(_bits(jt.threshold_backward(g, x, t)), _bits(expected))
      expected = oracle.threshold(np.asarray(x), t, 0.0)
      np.testing.assert_array_equal(_bits(jt.threshold(x, t, 0.0)), _bits(expected))
    self.assertEqual(api._threshold_backward._cache_size(), backward)
    self.assertEqual(api._threshold_forward._cache_size(), forward)

  def test_array_inputs_are_not_converted_before_the_call(self):
    g = jnp.ones(4, jnp.bfloat16)
    x_numpy = np.array([0.0, 1.0, 2.0, 3.0], ml_dtypes.bfloat16)
    for x in (jnp.asarray(x_numpy), x_numpy):
      with self.subTest(x=type(x).__name__):
        jt.threshold_backward(g, x, 1.5)  # traces once
        jt.threshold(x, 1.5, 0.0)
        with absltest.mock.patch.object(jnp, "asarray", side_effect=AssertionError("copied")):
          out = jt.threshold_backward(g, x, 1.5)
          forward = jt.threshold(x, 1.5, 0.0)
        np.testing.assert_array_equal(_bits(out), _bits(np.array([0, 0, 1, 1], ml_dtypes.bfloat16)))
        np.testing.assert_array_equal(_bits(forward), _bits(np.asarray(x) * (np.asarray(x) > 1.5)))

  def test_traced_callers_see_the_primitive_itself(self):
    # The jitted body is inlined while tracing: no nested jit around the primitive.
    x = jnp.ones(4, jnp.float32)
    for t in (0.5, jnp.float32(0.5)):
      with self.subTest(threshold=type(t).__name__):
        jaxpr = jax.make_jaxpr(lambda x, t=t: jt.threshold_backward(x, x, t))(x)
        self.assertEqual(jaxpr.eqns[-1].primitive, jt.threshold_backward_p)
        self.assertNotIn("jit", [e.primitive.name for e in jaxpr.eqns])
    jaxpr = jax.make_jaxpr(lambda x: jt.threshold(x, 0.5, 0.0))(x)
    self.assertEqual([e.primitive.name for e in jaxpr.eqns], ["custom_jvp_call"])


class DebugChecksTest(parameterized.TestCase):
  """With jax.debug_nans / debug_infs, an un-jitted call raises only when the result holds one."""

  G = np.array([np.nan, 1.0, np.inf, -np.inf, 2.0], np.float32)
  X = np.array([-1.0, 2.0, -np.inf, np.nan, 0.0], np.float32)

  @parameterized.product(flag=_DEBUG_FLAGS, impl=implementations.IMPLEMENTATIONS)
  def test_numpy_inputs_with_a_clean_result(self, flag, impl):
    expected = oracle.threshold_backward(self.G, self.X, 0.5)
    with flag[1](True):
      for t in (0.5, jnp.float32(0.5), np.float32(0.5)):
        out = jt.threshold_backward(self.G, self.X, t, implementation=impl)
        np.testing.assert_array_equal(_bits(out), _bits(expected))
      out = jt.threshold(self.X, 0.5, 0.0, implementation=impl)
      np.testing.assert_array_equal(_bits(out), _bits(oracle.threshold(self.X, 0.5, 0.0)))
      np.testing.assert_array_equal(_bits(jnp.where(self.X > 0.5, self.G, 0)), _bits(expected))

  @parameterized.product(flag=_DEBUG_FLAGS, impl=implementations.IMPLEMENTATIONS)
  def test_gradient_at_a_nan_or_inf_x(self, flag, impl):
    f = lambda x: jt.threshold(x, 0.5, 0.0, implementation=impl).sum()
    with flag[1](True):
      self.assertEqual(float(jax.grad(f)(np.float32(np.nan))), 0.0)
      np.testing.assert_array_equal(jax.grad(f)(self.X), [0.0, 1.0, 0.0, 0.0, 0.0])

  @parameterized.parameters(*((i,) for i in implementations.IMPLEMENTATIONS))
  def test_a_result_that_holds_nan_or_inf_still_raises(self, impl):
    g = np.array([np.nan, np.inf], np.float32)
    x = np.ones(2, np.float32)
    with jax.debug_nans(True), self.assertRaises(FloatingPointError):
      jt.threshold_backward(g, x, 0.5, implementation=impl)
    with jax.debug_infs(True), self.assertRaises(FloatingPointError):
      jt.threshold_backward(g[1:], x[1:], 0.5, implementation=impl)


def _sample_floats(rng, count):
  """Doubles of every kind: float32's normal range and its edges, subnormals of both formats,
  values that round to float32's ties, beyond float32's range, zeros, inf and NaN."""
  f32 = np.finfo(np.float32)
  values = [0.0, -0.0, math.inf, -math.inf, math.nan, 5e-324, -5e-324, 2.0**-126, 2.0**-127]
  values += [float(f32.max), float(f32.max) * (1 + 2**-25), float(f32.max) * (1 + 2**-24), 1e39]
  values += [float(f32.smallest_subnormal), float(f32.smallest_subnormal) / 2, 1.5e-40, 1e-300]
  values += [1 + 2**-24, 1 + 2**-24 + 2**-52, 1 + 3 * 2**-24, 16777217.0, 2.5, -2.5, 127.5]
  bits = rng.integers(0, 2**64, count, dtype=np.uint64)
  values += [float(v) for v in bits.view(np.float64)]  # every exponent, subnormals and NaNs too
  values += [float(v) for v in rng.standard_normal(count) * 10.0 ** rng.integers(-45, 45, count)]
  return values + [-v for v in values]


def _sample_ints(rng, count):
  values = [0, 1, -1, 127, 128, -129, 255, 256, 2**24 + 1, 2**31, -(2**31) - 1, 2**53, 2**53 + 1]
  values += [2**63, -(2**63) - 1, 2**64, 10**30, -(10**30)]
  values += [int(v) for v in rng.integers(-(2**62), 2**62, count)]
  return values + [int(v) for v in rng.integers(-300, 300, count)]


class PythonNumberThresholdTest(parameterized.TestCase):
  """The operand of a Python float or int (rounded by NumPy where that is one rounding to a
  normal float32) is the one the exact rounding of its Fraction gives."""

  def _assert_same_operand(self, t, exact, dtype):
    ours, ours_zero = _threshold.operand(t, dtype)
    want, want_zero = _threshold.operand(exact, dtype)
    self.assertEqual(ours.dtype, want.dtype, t)
    self.assertEqual(_bits(ours).tobytes(), _bits(want).tobytes(), t)
    self.assertEqual(ours_zero, want_zero, t)

  @parameterized.named_parameters(*dtype_lists.by_row(dtype=dtype_lists.SUPPORTED))
  def test_floats(self, dtype):
    for t in _sample_floats(np.random.default_rng(0), 2000):
      self._assert_same_operand(t, Fraction(t) if math.isfinite(t) else np.float64(t), dtype)

  @parameterized.named_parameters(*dtype_lists.by_row(dtype=dtype_lists.SUPPORTED))
  def test_ints(self, dtype):
    for t in _sample_ints(np.random.default_rng(1), 2000):
      self._assert_same_operand(t, Fraction(t), dtype)

  def test_the_rounding_is_the_oracles(self):
    rng = np.random.default_rng(2)
    for t in _sample_floats(rng, 200) + [float(v) for v in _sample_ints(rng, 100)]:
      ours, _ = _threshold.operand(t, np.float32)
      self.assertEqual(
        _bits(ours).tobytes(), _bits(np.float32(oracle._round(t, np.float32))).tobytes(), t
      )

  def test_a_bool_is_still_refused(self):
    with self.assertRaisesRegex(TypeError, "got a bool"):
      _threshold.operand(True, np.float32)


_SIXTEEN_BIT_FLOATS = [d for d in dtype_lists.FLOATS if d.itemsize == 2]


class SixteenBitSelectTest(parameterized.TestCase):
  """bfloat16 and float16 are selected as their bits: a NaN gradient keeps its payload (a float
  select widened to float32 and back quiets it) and the fused loop has no conversion."""

  @parameterized.product(dtype=_SIXTEEN_BIT_FLOATS, threshold=(0.5, 0.0, -1e-40))
  def test_every_passing_bit_pattern_is_kept(self, dtype, threshold):
    g_bits = np.arange(2**16, dtype=np.uint16)  # every value: NaN payloads, subnormals, zeros
    g = g_bits.view(dtype)
    x = np.resize(np.array([1.0, -1.0, 0.0, np.nan], dtype), g.shape)
    out = jax.jit(lambda g, x: jt.threshold_backward(g, x, threshold, implementation="reference"))(
      g, x
    )
    np.testing.assert_array_equal(_bits(out), _bits(oracle.threshold_backward(g, x, threshold)))

  @parameterized.parameters(*_SIXTEEN_BIT_FLOATS)
  def test_the_fused_select_is_sixteen_bits(self, dtype):
    x = jnp.ones(1024, dtype)
    fn = jax.jit(lambda g, x: jt.threshold_backward(g, x, 0.5, implementation="reference"))
    fused = fn.lower(x, x).compile().as_text().split("ENTRY")[0]
    self.assertIn("u16[1024]{0} select(", fused)
    if dtype == jnp.bfloat16:  # its compare reads x's own bits too: no float32 anywhere
      self.assertNotIn(" convert(", fused)
      self.assertNotIn("f32[1024]", fused)


if __name__ == "__main__":
  absltest.main()
