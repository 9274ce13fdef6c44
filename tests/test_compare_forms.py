"""The reference compare's forms: each exact in every flush mode, as cheap as the threshold allows.

`_threshold.greater` picks, from the threshold alone, a plain float compare (|t| >= the smallest
normal, ±inf, NaN) or the integer range check on the bits (zero and subnormal t); for a constant
threshold XLA folds the choice away. These tests check
- every form against the NumPy oracle, bit for bit, under jit (XLA's CPU threads flush
  subnormals), for static and traced thresholds, with subnormal, ±0, NaN and inf x and t;
- the fused program a static threshold compiles to: one fusion, the same compare as
  `jnp.where(x > t, g, 0)` for a normal threshold, two integer ops for a threshold of 0;
- the forward's jaxpr shows the compare as one named step (`threshold_mask`), at no cost in the
  compiled program.
"""

import re

from absl.testing import absltest
from absl.testing import parameterized
import jax
import jax.numpy as jnp
import numpy as np

import jax_threshold as jt
from jax_threshold import _threshold
import dtype_lists
import oracle

F32 = np.float32
_TINY32 = float(np.finfo(F32).tiny)  # the smallest normal float32
_SUB32 = float(np.finfo(F32).smallest_subnormal)
_LARGEST_SUB32 = float(np.nextafter(F32(_TINY32), F32(0)))
_NAN_PAYLOADS = np.array(
  [0x7FC00001, 0x7FFFFFFF, 0xFFFFFFFF, 0xFF800001, 0x7F800001], np.uint32
).view(F32)

SPECIAL32 = np.concatenate(
  [
    np.array(
      [
        0.0,
        -0.0,
        np.inf,
        -np.inf,
        np.nan,
        1.0,
        -1.0,
        0.5,
        -0.5,
        3.4e38,
        -3.4e38,
        _TINY32,
        -_TINY32,
        _SUB32,
        -_SUB32,
        2 * _SUB32,
        -2 * _SUB32,
        1e-40,
        -1e-40,
        _LARGEST_SUB32,
        -_LARGEST_SUB32,
      ],
      F32,
    ),
    _NAN_PAYLOADS,
  ]
)
THRESHOLDS32 = [
  0.0,
  -0.0,
  0.5,
  -0.5,
  1.0,
  _TINY32,
  -_TINY32,
  _SUB32,
  -_SUB32,
  1e-40,
  -1e-40,
  _LARGEST_SUB32,
  -_LARGEST_SUB32,
  3.4e38,
  -3.4e38,
  np.inf,
  -np.inf,
  np.nan,
]


def _bits(a):
  return oracle.bits(np.asarray(a))


def _fused_ops(fn, *args):
  """(number of fusions, the ops inside them) of fn's optimized HLO, constants left out."""
  text = jax.jit(fn).lower(*args).compile().as_text()
  computations = text.split("ENTRY")[0]
  ops = []
  for line in computations.splitlines():
    m = re.match(r"\s*(?:ROOT )?%\S+ = \S+ (\S+?)\(", line)
    if m and m.group(1) not in ("parameter", "constant", "broadcast"):
      ops.append(m.group(1))
  return text.split("ENTRY")[1].count(" fusion("), sorted(ops)


class ExactFormsTest(parameterized.TestCase):
  @parameterized.parameters(*dtype_lists.NARROW_FLOATS)
  def test_static_thresholds_under_jit(self, dtype):
    with np.errstate(invalid="ignore", over="ignore"):
      x = SPECIAL32.astype(dtype)
    g = np.arange(1, x.size + 1).astype(dtype)
    for t in THRESHOLDS32:
      with self.subTest(threshold=t):
        out = jax.jit(lambda g, x, t=t: jt.threshold_backward(g, x, t, implementation="reference"))(
          g, x
        )
        np.testing.assert_array_equal(_bits(out), _bits(oracle.threshold_backward(g, x, t)))

  @parameterized.parameters(*dtype_lists.NARROW_FLOATS)
  def test_traced_thresholds_under_jit(self, dtype):
    with np.errstate(invalid="ignore", over="ignore"):
      x = SPECIAL32.astype(dtype)
    g = np.arange(1, x.size + 1).astype(dtype)
    f = jax.jit(lambda g, x, t: jt.threshold_backward(g, x, t, implementation="reference"))
    for t in THRESHOLDS32:
      with self.subTest(threshold=t):
        np.testing.assert_array_equal(
          _bits(f(g, x, F32(t))), _bits(oracle.threshold_backward(g, x, t))
        )

  @parameterized.parameters(*dtype_lists.NARROW_FLOATS)
  def test_vmap_over_thresholds_of_every_kind(self, dtype):
    with np.errstate(invalid="ignore", over="ignore"):
      x = SPECIAL32.astype(dtype)
    g = np.arange(1, x.size + 1).astype(dtype)
    ts = np.array(THRESHOLDS32, F32)
    out = jax.jit(jax.vmap(lambda t: jt.threshold_backward(g, x, t, implementation="reference")))(
      ts
    )
    for row, t in zip(np.asarray(out), THRESHOLDS32):
      np.testing.assert_array_equal(_bits(row), _bits(oracle.threshold_backward(g, x, t)))

  def test_integer_form_alone_is_exact_for_every_threshold(self):
    # greater_by_bits is also what a traced threshold runs; check it on its own.
    x = SPECIAL32
    f = jax.jit(_threshold.greater_by_bits)
    for t in THRESHOLDS32:
      with self.subTest(threshold=t):
        np.testing.assert_array_equal(np.asarray(f(x, F32(t))), oracle.threshold_mask(x, t))

  def test_float64_forms(self):
    with jax.enable_x64(True):
      tiny, sub = float(np.finfo(np.float64).tiny), float(np.finfo(np.float64).smallest_subnormal)
      x = np.array(
        [
          0.0,
          -0.0,
          np.inf,
          -np.inf,
          np.nan,
          1.0,
          -1.0,
          tiny,
          -tiny,
          sub,
          -sub,
          1e-310,
          -1e-310,
          0.5,
        ],
        np.float64,
      )
      g = np.arange(1, x.size + 1).astype(np.float64)
      f = jax.jit(lambda g, x, t: jt.threshold_backward(g, x, t, implementation="reference"))
      for t in (
        0.0,
        -0.0,
        0.5,
        -0.5,
        tiny,
        -tiny,
        sub,
        -sub,
        1e-310,
        -1e-310,
        np.inf,
        -np.inf,
        np.nan,
      ):
        with self.subTest(threshold=t):
          expected = _bits(oracle.threshold_backward(g, x, t))
          static = jax.jit(
            lambda g, x, t=t: jt.threshold_backward(g, x, t, implementation="reference")
          )(g, x)
          np.testing.assert_array_equal(_bits(static), expected)
          np.testing.assert_array_equal(_bits(f(g, x, np.float64(t))), expected)

  def test_forward_threshold_at_subnormals(self):
    for t in (0.0, -1e-40, 1e-40, 0.5):
      with self.subTest(threshold=t):
        out = jax.jit(lambda x, t=t: jt.threshold(x, t, 7.0))(SPECIAL32)
        np.testing.assert_array_equal(_bits(out), _bits(oracle.threshold(SPECIAL32, t, 7.0)))


class FusedProgramTest(parameterized.TestCase):
  """What a static threshold compiles to (no timing: the op lists are the contract)."""

  def test_normal_threshold_compiles_to_the_compare_of_jnp_where(self):
    x = jnp.ones(1024, F32)
    for t in (0.5, -2.0, 1e30):
      with self.subTest(threshold=t):
        ours = _fused_ops(lambda g, x, t=t: jt.threshold_backward(g, x, t), x, x)
        where = _fused_ops(lambda g, x, t=t: jnp.where(x > t, g, jnp.zeros((), g.dtype)), x, x)
        self.assertEqual(ours, where)

  def test_bfloat16_normal_threshold_is_one_range_check_without_float_ops(self):
    x = jnp.ones(1024, jnp.bfloat16)
    for t in (0.5, 1e30):
      with self.subTest(threshold=t):
        fusions, ops = _fused_ops(lambda g, x, t=t: jt.threshold_backward(g, x, t), x, x)
        self.assertEqual(fusions, 1)
        self.assertNotIn("shift-left", ops)  # x is not widened: no float compare in the loop
        self.assertEqual(ops.count("compare"), 1)

  def test_zero_threshold_compiles_to_two_integer_ops(self):
    x = jnp.ones(1024, F32)
    fusions, ops = _fused_ops(lambda g, x: jt.threshold_backward(g, x, 0.0), x, x)
    self.assertEqual(fusions, 1)
    # bits - 1 < +inf's bits, unsigned; the two bitcasts are free.
    self.assertEqual(ops, ["add", "bitcast-convert", "bitcast-convert", "compare", "select"])

  def test_bfloat16_zero_threshold_compares_its_own_bits(self):
    x = jnp.ones(1024, jnp.bfloat16)
    fusions, ops = _fused_ops(lambda g, x: jt.threshold_backward(g, x, 0.0), x, x)
    self.assertEqual(fusions, 1)
    self.assertNotIn("shift-left", ops)  # x is not widened
    self.assertEqual(ops.count("compare"), 1)
    self.assertEqual(ops.count("add"), 1)

  def test_traced_threshold_stays_one_fusion(self):
    x = jnp.ones(1024, F32)
    fusions, _ = _fused_ops(lambda g, x, t: jt.threshold_backward(g, x, t), x, x, F32(0.5))
    self.assertEqual(fusions, 1)

  def test_static_operand_is_a_constant_of_the_fused_program(self):
    # The folding relies on the static threshold reaching XLA as a constant.
    self.assertIsInstance(_threshold.operand(0.5, np.float32)[0], np.ndarray)


class ForwardJaxprTest(absltest.TestCase):
  def test_forward_shows_one_named_mask_step(self):
    jaxpr = jax.make_jaxpr(lambda x: jt.threshold(x, 0.5, 0.0))(jnp.ones(8, F32))
    outer = jaxpr.jaxpr.eqns[0].params["call_jaxpr"]  # inside the custom_jvp
    names = [e.params.get("name") for e in outer.eqns]
    self.assertIn("threshold_mask", names)
    self.assertLessEqual(len(outer.eqns), 3)
    self.assertNotIn("bitcast_convert_type", [e.primitive.name for e in outer.eqns])

  def test_named_step_costs_nothing_in_the_fused_program(self):
    x = jnp.ones(1024, F32)
    for t in (0.5, 0.0):
      with self.subTest(threshold=t):
        ours = _fused_ops(lambda x, t=t: jt.threshold(x, t, 0.0), x)
        inline = _fused_ops(
          lambda x, t=t: jnp.where(
            _threshold.threshold_mask(x, jnp.asarray(_threshold.operand(t, F32)[0])), x, 0.0
          ),
          x,
        )
        self.assertEqual(ours, inline)


if __name__ == "__main__":
  absltest.main()
