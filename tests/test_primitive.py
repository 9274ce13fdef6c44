"""threshold_backward values against the NumPy oracle, and every rejected input.

Every test runs once per available implementation (see implementations.py).
Transformations (vmap, grad, transpose, recompilation) are in
test_transformations.py.
"""

import os
from unittest import mock

from absl.testing import absltest
from absl.testing import parameterized
import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np

import jax_threshold as jt
from jax_threshold import lowering
import dtype_lists
import implementations
import oracle

NAN, INF = float("nan"), float("inf")
FLOAT_DTYPES = dtype_lists.NARROW_FLOATS
INT_DTYPES = dtype_lists.CANONICAL_INTEGERS

FLOAT_X = [
  -INF,
  -3.0,
  -2.5,
  -1.0,
  -1e-9,
  -0.0,
  0.0,
  1e-9,
  0.3,
  0.5,
  1.0,
  1.5,
  2.5,
  3.0,
  100.0,
  INF,
  NAN,
]
FLOAT_THRESHOLDS = [0.0, -0.0, 1.0, 2.5, -2.5, 1e-9, -1e-9, 0.3, 1e30, INF, -INF, NAN]
INT_THRESHOLDS = [
  0,
  1,
  -1,
  2.5,
  -2.5,
  3,
  -0.5,
  126.5,
  127,
  128,
  -128,
  -128.5,
  -129,
  254.5,
  255,
  256,
  1e10,
  -1e10,
  2**31,
  -(2**31) - 1,
  INF,
  -INF,
  NAN,
]


def _int_x(dtype):
  info = np.iinfo(dtype)
  values = [v for v in range(-130, 131) if info.min <= v <= info.max]
  values += [info.min, info.min + 1, info.max - 1, info.max]
  return np.array(values, dtype)


def _grads_like(x):
  """Nonzero gradients of x's dtype, so a passed element never looks masked."""
  return ((np.arange(x.size) % 5) + 1).reshape(x.shape).astype(x.dtype)


@implementations.for_each_implementation
class ThresholdBackwardValuesTest(parameterized.TestCase):
  def assertBitsEqual(self, actual, expected):
    actual, expected = np.asarray(actual), np.asarray(expected)
    self.assertEqual(actual.dtype, expected.dtype)
    self.assertEqual(actual.shape, expected.shape)
    np.testing.assert_array_equal(oracle.bits(actual), oracle.bits(expected))

  def check(self, g, x, t):
    self.assertBitsEqual(jt.threshold_backward(g, x, t), oracle.threshold_backward(g, x, t))

  def test_cann_documentation_example(self):
    x = np.array([[0.2, 1.2], [2.2, 3.2]], np.float32)
    g = np.array([[4.5, 4.4], [4.3, 4.2]], np.float32)
    out = jt.threshold_backward(g, x, 1.0)
    self.assertBitsEqual(out, np.array([[0.0, 4.4], [4.3, 4.2]], np.float32))
    # CANN's documentation claims the same output for threshold 0.0; but 0.2 > 0 passes.
    self.assertBitsEqual(jt.threshold_backward(g, x, 0.0), g)

  @parameterized.parameters(*FLOAT_DTYPES)
  def test_float_dtypes(self, dtype):
    x = np.array(FLOAT_X, dtype)
    g = _grads_like(x)
    for t in FLOAT_THRESHOLDS:
      with self.subTest(threshold=t):
        self.check(g, x, t)

  @parameterized.parameters(*INT_DTYPES)
  def test_integer_dtypes(self, dtype):
    x = _int_x(dtype)
    g = _grads_like(x)
    for t in INT_THRESHOLDS:
      with self.subTest(threshold=t):
        self.check(g, x, t)

  @parameterized.parameters(*INT_DTYPES)
  def test_integer_dtypes_traced_thresholds(self, dtype):
    x = _int_x(dtype)
    g = _grads_like(x)
    f = jax.jit(jt.threshold_backward)
    thresholds = [
      np.float32(2.5),
      np.float32(-128.5),
      np.float32(1e10),
      np.float32(NAN),
      np.float32(-INF),
      ml_dtypes.bfloat16(3.5),
      np.int32(-1),
      np.int32(300),
      np.int32(-300),
      np.int8(-1),
      np.uint8(200),
      np.uint8(255),
      np.int32(2**31 - 1),
    ]
    for t in thresholds:
      with self.subTest(threshold=repr(t)):
        self.assertBitsEqual(f(g, x, jnp.asarray(t)), oracle.threshold_backward(g, x, t))

  @parameterized.parameters(*FLOAT_DTYPES)
  def test_float_dtypes_traced_thresholds(self, dtype):
    x = np.array(FLOAT_X, dtype)
    g = _grads_like(x)
    f = jax.jit(jt.threshold_backward)
    for t in [
      np.float32(0.3),
      np.float16(2.5),
      ml_dtypes.bfloat16(-1.0),
      np.int32(3),
      np.float32(NAN),
    ]:
      with self.subTest(threshold=repr(t)):
        self.assertBitsEqual(
          f(g, x, jnp.asarray(t)), oracle.threshold_backward(g, x, np.float32(t))
        )

  def test_strict_comparison_at_the_boundary(self):
    for dtype in FLOAT_DTYPES + INT_DTYPES:
      with self.subTest(dtype=np.dtype(dtype).name):
        x = np.array([1, 2, 3], dtype)
        out = jt.threshold_backward(np.ones(3, dtype), x, 2)
        self.assertBitsEqual(out, np.array([0, 0, 1], dtype))

  def test_nan_x_never_passes(self):
    x = np.array([NAN, -NAN, 1.0], np.float32)
    out = jt.threshold_backward(np.full(3, 7.0, np.float32), x, -INF)
    self.assertBitsEqual(out, np.array([0.0, 0.0, 7.0], np.float32))

  @parameterized.parameters(0.0, -0.0, 1.0, -1.0)
  def test_masked_inf_and_nan_gradients_are_exactly_zero(self, t):
    # A select, not a multiply: inf * 0 would be NaN. Threshold 0 (ReluGrad upstream)
    # must give the same bits as any other threshold.
    x = np.array([-5.0, -5.0, -5.0, 5.0, 5.0, 5.0, t], np.float32)
    g = np.array([INF, -INF, NAN, INF, -INF, NAN, INF], np.float32)
    out = np.asarray(jt.threshold_backward(g, x, t))
    self.assertBitsEqual(out[[0, 1, 2, 6]], np.zeros(4, np.float32))
    self.assertBitsEqual(out[[3, 4, 5]], g[[3, 4, 5]])

  def test_negative_zero_gradient_passes_through(self):
    out = jt.threshold_backward(
      np.array([-0.0, -0.0], np.float32), np.array([1.0, -1.0], np.float32), 0.0
    )
    self.assertBitsEqual(out, np.array([-0.0, 0.0], np.float32))

  def test_float16_threshold_rounds_once_to_float32(self):
    # 1.0006 rounds to float16 1.0009765625 (upstream's comparison value), to float32
    # 1.00059998...; x = 1.0009765625 passes only with the float32 threshold.
    x = np.array([1.0, 1.0009765625], np.float16)
    out = jt.threshold_backward(np.ones(2, np.float16), x, 1.0006)
    self.assertBitsEqual(out, np.array([0.0, 1.0], np.float16))

  def test_bfloat16_threshold_rounds_once_to_float32(self):
    x = np.array([1.0, 1.0078125], ml_dtypes.bfloat16)  # bfloat16(1.005) == 1.0078125
    out = jt.threshold_backward(np.ones(2, ml_dtypes.bfloat16), x, 1.005)
    self.assertBitsEqual(out, np.array([0.0, 1.0], ml_dtypes.bfloat16))

  def test_int32_beyond_float32_precision(self):
    x = np.array([16777216, 16777217, 16777218, 2**31 - 1, -(2**31), -(2**31) + 1], np.int32)
    g = np.ones_like(x)
    cases = {
      16777216: [0, 1, 1, 1, 0, 0],
      16777216.5: [0, 1, 1, 1, 0, 0],  # x > 16777216.5 exactly
      16777217.5: [0, 0, 1, 1, 0, 0],  # float32(16777217.5) == 16777218 would drop x=16777218
      2147483646.5: [0, 0, 0, 1, 0, 0],
      -2147483648: [1, 1, 1, 1, 0, 1],
      -2147483648.5: [1, 1, 1, 1, 1, 1],
    }
    for t, expected in cases.items():
      with self.subTest(threshold=t):
        self.assertBitsEqual(jt.threshold_backward(g, x, t), np.array(expected, np.int32))

  def test_uint8_negative_threshold_lets_everything_pass(self):
    x = np.array([0, 1, 128, 255], np.uint8)
    for t in (-1, -0.5, -1e30, -INF, np.int32(-1)):
      with self.subTest(threshold=t):
        self.assertBitsEqual(
          jt.threshold_backward(np.full(4, 9, np.uint8), x, t), np.full(4, 9, np.uint8)
        )
    self.assertBitsEqual(
      jt.threshold_backward(np.full(4, 9, np.uint8), x, 254.5), np.array([0, 0, 0, 9], np.uint8)
    )

  def test_tiny_threshold_is_not_zero(self):
    # Upstream treats |threshold| <= FLT_EPSILON as 0 (ReluGrad); we keep x > t exact.
    x = np.array([0.0, 5e-10, 1e-9, 2e-9, -5e-10], np.float32)
    g = np.ones_like(x)
    self.assertBitsEqual(jt.threshold_backward(g, x, 1e-9), np.array([0, 0, 0, 1, 0], np.float32))
    self.assertBitsEqual(jt.threshold_backward(g, x, -1e-9), np.array([1, 1, 1, 1, 1], np.float32))

  def test_huge_integer_threshold_rounds_once_for_float32(self):
    # 2^60 + 2^36 + 1 rounds to float32 2^60 + 2^37; via float64 it would round twice,
    # to 2^60, and let x = 2^60 + 2^37 pass.
    x = np.array([2.0**60 + 2.0**37, 2.0**60 + 2.0**38], np.float32)
    out = jt.threshold_backward(np.ones(2, np.float32), x, 2**60 + 2**36 + 1)
    self.assertBitsEqual(out, np.array([0.0, 1.0], np.float32))

  @parameterized.named_parameters(
    ("column_row", (3, 1), (1, 4)),
    ("lower_rank_grad", (4,), (2, 3, 4)),
    ("lower_rank_x", (2, 3, 4), (3, 1)),
    ("scalar_grad", (), (5,)),
    ("scalar_x", (2, 3), ()),
    ("both_scalar", (), ()),
    ("empty", (0, 3), (0, 3)),
    ("empty_broadcast", (0, 1), (1, 5)),
    ("empty_against_scalar", (), (2, 0)),
    ("rank9", (1, 2, 1, 2, 1, 2, 1, 1, 2), (2,)),
    ("rank10", (2, 1, 1, 2, 1, 1, 2, 1, 1, 3), (2, 1, 1, 2, 1, 1, 2, 1, 1, 1)),
  )
  def test_shapes(self, g_shape, x_shape):
    rng = np.random.default_rng(0)
    g = rng.standard_normal(g_shape).astype(np.float32)
    x = rng.standard_normal(x_shape).astype(np.float32)
    self.check(g, x, 0.25)
    self.check(g.astype(np.int8), np.round(x * 3).astype(np.int8), -0.5)

  def test_inside_jit(self):
    x = np.array([-1.0, 0.5, 2.0], np.float32)
    g = np.array([1.0, 2.0, 3.0], np.float32)
    out = jax.jit(lambda g, x: jt.threshold_backward(g, x, 0.4))(g, x)
    self.assertBitsEqual(out, np.array([0.0, 2.0, 3.0], np.float32))

  def test_primitive_bind_directly(self):
    x = np.array([-1.0, 0.5, 2.0], np.float32)
    out = jt.threshold_backward_p.bind(
      jnp.ones(3, jnp.float32), jnp.asarray(x), jnp.float32(0.4), implementation=self.implementation
    )
    self.assertBitsEqual(out, np.array([0.0, 1.0, 1.0], np.float32))

  def test_forward_threshold_activation(self):
    for dtype in FLOAT_DTYPES + INT_DTYPES:
      with self.subTest(dtype=np.dtype(dtype).name):
        x = np.array(FLOAT_X, dtype) if dtype in FLOAT_DTYPES else _int_x(dtype)
        for t, v in [(1.0, 7.0), (0.0, 0.0), (-2.5, 20), (NAN, 3.0), (-129, 1)]:
          out = jt.threshold(x, t, v)
          self.assertBitsEqual(out, oracle.threshold(x, t, v))


@implementations.for_each_implementation
class ThresholdBackwardX64Test(parameterized.TestCase):
  """int64 and float64, which exist only under x64 (enabled per test, never globally)."""

  def setUp(self):
    super().setUp()
    self.enter_context(jax.enable_x64(True))

  def check(self, g, x, t, traced=False):
    fn = jax.jit(jt.threshold_backward) if traced else jt.threshold_backward
    actual = np.asarray(fn(g, x, jnp.asarray(t) if traced else t))
    expected = oracle.threshold_backward(g, x, t)
    self.assertEqual(actual.dtype, expected.dtype)
    np.testing.assert_array_equal(oracle.bits(actual), oracle.bits(expected))

  def test_int64(self):
    info = np.iinfo(np.int64)
    x = np.array(
      [
        info.min,
        info.min + 1,
        -(2**53) - 1,
        -1,
        0,
        1,
        2**53 + 1,
        2**62 + 1,
        info.max - 1,
        info.max,
      ],
      np.int64,
    )
    g = _grads_like(x)
    for t in [
      0,
      2.5,
      -0.5,
      2**53,
      2**62,
      2**62 + 1,
      info.max - 1,
      info.max,
      2**63,
      info.min,
      info.min - 1,
      9.3e18,
      -9.3e18,
      INF,
      -INF,
      NAN,
    ]:
      with self.subTest(threshold=t):
        self.check(g, x, t)
    for t in [
      np.float32(2.0**62),
      np.float32(-(2.0**63)),
      np.float32(2.0**63),
      np.float64(2.5),
      np.int32(-7),
      np.int64(2**62 + 1),
      np.uint8(3),
    ]:
      with self.subTest(traced_threshold=repr(t)):
        self.check(g, x, t, traced=True)

  def test_int64_thresholds_for_narrow_integers(self):
    for dtype in INT_DTYPES:
      x = _int_x(dtype)
      g = _grads_like(x)
      for t in [
        np.int64(-1),
        np.int64(5),
        np.int64(3_000_000_000),
        np.int64(-3_000_000_000),
        np.int64(2**40),
        np.uint32(4_000_000_000),
        np.float64(126.5),
      ]:
        with self.subTest(dtype=np.dtype(dtype).name, threshold=repr(t)):
          self.check(g, x, t, traced=True)

  def test_float64(self):
    x = np.array(FLOAT_X + [1 + 2.0**-40, 1 + 2.0**-42], np.float64)
    g = _grads_like(x)
    for t in FLOAT_THRESHOLDS + [1 + 2.0**-41, 2**60 + 1]:
      with self.subTest(threshold=t):
        self.check(g, x, t)
    self.check(g, x, np.float64(1 + 2.0**-41), traced=True)
    out = np.asarray(
      jt.threshold_backward(np.ones(2), np.array([1 + 2.0**-40, 1 + 2.0**-42]), 1 + 2.0**-41)
    )
    np.testing.assert_array_equal(out, [1.0, 0.0])  # float32 would compare 1 > 1

  def test_float32_with_64_bit_thresholds(self):
    x = np.array([16777216.0, 16777218.0, 0.5], np.float32)
    g = np.ones_like(x)
    for t in [np.int64(16777217), np.float64(16777217.0), np.float64(0.4999999999)]:
      with self.subTest(threshold=repr(t)):
        self.check(g, x, t, traced=True)


class ThresholdBackwardErrorsTest(parameterized.TestCase):
  @parameterized.parameters(*dtype_lists.unsupported_jax_dtypes())
  def test_unsupported_dtype(self, dtype):
    x = np.zeros(3, dtype)
    name = np.dtype(dtype).name
    supported = ", ".join(d.name for d in dtype_lists.SUPPORTED)
    with self.assertRaisesRegex(TypeError, f"{name}.*supported dtypes: {supported}$"):
      jt.threshold_backward(x, x, 0.0)
    with self.assertRaisesRegex(TypeError, name):
      jax.jit(lambda g, x: jt.threshold_backward(g, x, 0.0))(x, x)  # at trace time
    with self.assertRaisesRegex(TypeError, name):
      jt.threshold(x, 0.0, 0.0)

  def test_unsupported_64_bit_dtypes_under_x64(self):
    with jax.enable_x64(True):
      for dtype in dtype_lists.unsupported_jax_dtypes():
        with self.assertRaisesRegex(TypeError, np.dtype(dtype).name):
          jt.threshold_backward(np.zeros(2, dtype), np.zeros(2, dtype), 0)

  def test_mismatched_dtypes(self):
    with self.assertRaisesRegex(TypeError, "grad_output float32 and x float16"):
      jt.threshold_backward(np.zeros(3, np.float32), np.zeros(3, np.float16), 0.0)

  def test_shapes_that_do_not_broadcast(self):
    with self.assertRaisesRegex(ValueError, r"grad_output \(2, 3\), x \(4,\)"):
      jt.threshold_backward(np.zeros((2, 3), np.float32), np.zeros(4, np.float32), 0.0)
    with self.assertRaisesRegex(ValueError, "do not broadcast"):
      jax.jit(lambda g, x: jt.threshold_backward(g, x, 0.0))(jnp.zeros(2), jnp.zeros(3))

  @parameterized.named_parameters(
    ("numpy_vector", np.zeros(2)),
    ("jax_vector", jnp.zeros((1,))),
    ("list", [1.0]),
    ("matrix", np.zeros((1, 1))),
  )
  def test_non_scalar_threshold(self, t):
    with self.assertRaisesRegex(ValueError, "threshold must be a scalar"):
      jt.threshold_backward(np.zeros(2, np.float32), np.zeros(2, np.float32), t)

  @parameterized.named_parameters(
    ("complex", 1j),
    ("bool", True),
    ("numpy_bool", np.bool_(False)),
    ("string", "1.0"),
    ("complex_array", jnp.complex64(1)),
    ("none", None),
  )
  def test_non_real_threshold(self, t):
    with self.assertRaises(TypeError):
      jt.threshold_backward(np.zeros(2, np.float32), np.zeros(2, np.float32), t)

  def test_bad_threshold_operand_at_the_primitive(self):
    g = jnp.zeros(3, jnp.float32)
    with self.assertRaisesRegex(TypeError, "must have dtype float32; got float16"):
      jt.threshold_backward_p.bind(g, g, jnp.float16(0), implementation="reference")
    for bad in (jnp.zeros(2, jnp.float32), jnp.zeros((2, 2), jnp.float32)):
      with self.assertRaisesRegex(ValueError, "threshold operand must be 0-d"):
        jt.threshold_backward_p.bind(g, g, bad, implementation="reference")
    with self.assertRaisesRegex(ValueError, "threshold operand must be 0-d"):  # rank 1 < 2
      jt.threshold_backward_p.bind(
        jnp.zeros((2, 3)), jnp.zeros((2, 3)), jnp.zeros(3), implementation="reference"
      )
    with self.assertRaisesRegex(ValueError, "unknown implementation"):
      jt.threshold_backward_p.bind(g, g, jnp.float32(0), implementation="fast")

  def test_bad_value_for_threshold_activation(self):
    x = np.zeros(3, np.float32)
    with self.assertRaisesRegex(ValueError, "value must be a scalar"):
      jt.threshold(x, 0.0, np.zeros(3))
    with self.assertRaisesRegex(TypeError, "value must be a real number"):
      jt.threshold(x, 0.0, 1j)
    with self.assertRaisesRegex(ValueError, "does not fit x's dtype uint8"):
      jt.threshold(np.zeros(3, np.uint8), 0, -7)

  def test_unknown_implementation(self):
    x = np.zeros(2, np.float32)
    with self.assertRaisesRegex(ValueError, "unknown implementation 'cuda'"):
      jt.threshold_backward(x, x, 0.0, implementation="cuda")
    with self.assertRaisesRegex(ValueError, "unknown implementation"):
      with jt.implementation("Reference"):
        pass

  def test_ffi_without_native_extension(self):
    if "ffi" in jt.available_implementations():
      self.skipTest("the native extension is built")
    x = np.zeros(2, np.float32)
    with self.assertRaisesRegex(ValueError, "'ffi' is not available.*native extension"):
      jt.threshold_backward(x, x, 0.0, implementation="ffi")
    with self.assertRaisesRegex(ValueError, "native extension"):
      with jt.implementation("ffi"):
        pass

  def test_environment_variable(self):
    x = np.array([0.0, 1.0], np.float32)
    jaxpr_of = lambda: str(jax.make_jaxpr(lambda x: jt.threshold_backward(x, x, 0.5))(x))
    with mock.patch.dict(os.environ, {lowering.ENV_VAR: "reference"}):
      self.assertIn("implementation=reference", jaxpr_of())
      with jt.implementation("auto"):  # the block wins over the environment
        self.assertIn("implementation=auto", jaxpr_of())
    with mock.patch.dict(os.environ, {lowering.ENV_VAR: "fastest"}):
      with self.assertRaisesRegex(ValueError, "JAX_THRESHOLD_IMPLEMENTATION='fastest'"):
        jaxpr_of()
    with mock.patch.dict(os.environ, {}, clear=False):
      os.environ.pop(lowering.ENV_VAR, None)
      self.assertIn("implementation=auto", jaxpr_of())

  def test_public_names(self):
    self.assertEqual(jt.threshold_backward_p.name, "threshold_backward")
    self.assertIn("reference", jt.available_implementations())
    self.assertEqual(jt.available_implementations()[0], "reference")
    self.assertIsInstance(jt.ffi_targets(), tuple)
    if "ffi" not in jt.available_implementations():
      self.assertEqual(jt.ffi_targets(), ())


if __name__ == "__main__":
  absltest.main()
