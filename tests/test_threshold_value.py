"""The one threshold conversion (jax_threshold/_threshold.py) and its users.

Every real number a user can write -- int of any size, float, Fraction, Decimal, NumPy scalars,
0-d arrays -- is rounded at most once, straight from its exact value (docs/behaviour.md §1). The
cases a conversion via float64 would get wrong (huge ints, thresholds one rounding apart, values
beyond the float range) run on the executor's Python face and on every JAX implementation,
against the independent oracle (tests/oracle.py).
"""

import decimal
from decimal import Decimal
from fractions import Fraction
import math

from absl.testing import absltest
from absl.testing import parameterized
import hypothesis
from hypothesis import strategies as st
import jax
import ml_dtypes
import numpy as np

import jax_threshold as jt
from jax_threshold import _threshold as tv
import oracle

try:
  from jax_threshold import aclnn
except ImportError:  # a source tree without the compiled extension
  aclnn = None

BF16 = np.dtype(ml_dtypes.bfloat16)
ONE_ROUNDING = Fraction(1) + Fraction(1, 2**24) + Fraction(1, 2**60)  # double rounding: 1.0


def _decimal(q: Fraction) -> Decimal:
  """The exact Decimal of a dyadic Fraction (its decimal expansion terminates)."""
  k = q.denominator.bit_length() - 1
  assert q.denominator == 1 << k
  digits = q.numerator * 5**k
  with decimal.localcontext() as ctx:
    ctx.prec = len(str(abs(digits))) + 2
    return Decimal(digits).scaleb(-k)


class ExactValueTest(parameterized.TestCase):
  @parameterized.parameters(
    (3, Fraction(3)),
    (-(2**200), Fraction(-(2**200))),
    (0.1, Fraction(0.1)),
    (Fraction(1, 3), Fraction(1, 3)),
    (Decimal("0.1"), Fraction(1, 10)),
    (Decimal("-1e-400"), -Fraction(1, 10**400)),
    (np.float16(0.1), Fraction(np.float16(0.1).item())),
    (ml_dtypes.bfloat16(1.5), Fraction(3, 2)),
    (np.int8(-7), Fraction(-7)),
    (np.uint64(2**64 - 1), Fraction(2**64 - 1)),
    (np.array(2.5), Fraction(5, 2)),
    (np.array(7, np.int32), Fraction(7)),
  )
  def test_values(self, threshold, expected):
    self.assertEqual(tv.exact_value(threshold), expected)

  def test_longdouble(self):
    third = np.longdouble(1) / np.longdouble(3)
    self.assertEqual(tv.exact_value(third), Fraction(*third.as_integer_ratio()))

  @parameterized.parameters(
    (math.inf,),
    (-math.inf,),
    (Decimal("Infinity"),),
    (Decimal("-Infinity"),),
    (np.float32(-np.inf),),
  )
  def test_infinities(self, threshold):
    value = tv.exact_value(threshold)
    self.assertTrue(math.isinf(value))
    self.assertEqual(value > 0, float(threshold) > 0)

  @parameterized.parameters(
    (math.nan,), (Decimal("NaN"),), (Decimal("sNaN"),), (np.float16("nan"),)
  )
  def test_nan(self, threshold):
    self.assertTrue(math.isnan(tv.exact_value(threshold)))

  @parameterized.parameters(
    (True,),
    (False,),
    (np.bool_(True),),
    (np.array(False),),
    (1j,),
    (np.complex64(1),),
    ("1.0",),
    (None,),
    ([1.0],),
  )
  def test_not_real(self, threshold):
    with self.assertRaises(TypeError):
      tv.exact_value(threshold)

  def test_not_scalar(self):
    with self.assertRaisesRegex(ValueError, "shape"):
      tv.exact_value(np.ones(2))


class RoundingTest(parameterized.TestCase):
  def test_rounded_once(self):
    # Via float64 this is 1 + 2^-24, a float32 tie that rounds to 1.0; once, it is 1 + 2^-23.
    self.assertEqual(tv.round_to(ONE_ROUNDING, np.float32), 1 + 2**-23)
    self.assertEqual(tv.round_to(Fraction(2**100 + 2**76 + 1), np.float32), 2.0**100 + 2.0**77)

  @parameterized.parameters((np.float32,), (np.float64,))
  def test_overflow_and_underflow(self, float_type):
    finfo = np.finfo(float_type)
    big = Fraction(int(finfo.max))
    half_ulp = Fraction(int(finfo.max) - int(np.nextafter(finfo.max, 0, dtype=float_type))) / 2
    self.assertEqual(tv.round_to(big, float_type), float(finfo.max))
    self.assertEqual(tv.round_to(big + half_ulp - Fraction(1, 10**9), float_type), float(finfo.max))
    self.assertEqual(tv.round_to(big + half_ulp, float_type), math.inf)  # the tie goes to "even"
    self.assertEqual(tv.round_to(-Fraction(2**1100), float_type), -math.inf)
    tiny = Fraction(float(finfo.smallest_subnormal))
    self.assertEqual(tv.round_to(tiny / 2, float_type), 0.0)  # a tie: 0 is even
    self.assertEqual(
      tv.round_to(tiny / 2 + Fraction(1, 2**2000), float_type),
      float(finfo.smallest_subnormal),
    )

  @hypothesis.settings(max_examples=300, deadline=None)
  @hypothesis.given(
    numerator=st.integers(-(2**140), 2**140),
    denominator_exp=st.integers(0, 1200),
    odd=st.integers(1, 10**6),
  )
  def test_matches_the_oracle(self, numerator, denominator_exp, odd):
    value = Fraction(numerator, 2**denominator_exp * (2 * odd - 1))
    for float_type in (np.float32, np.float64):
      ours = float_type(tv.round_to(value, float_type))
      self.assertEqual(ours, oracle._round(value, float_type), (value, float_type))

  @parameterized.parameters(
    (np.int8, Fraction(5, 2), 2),
    (np.int8, Fraction(-257, 2), -129),
    (np.int8, Fraction(-128), -128),
    (np.int8, Fraction(127), 127),
    (np.int8, Fraction(128), 128),
    (np.int8, 2**100, 128),
    (np.uint8, Fraction(-1, 2), -1),
    (np.int64, Fraction(-(2**63) - 7), -(2**63) - 1),
    (np.int64, math.nan, 2**63),
    (np.int32, math.inf, 2**31),
    (np.int32, -math.inf, -(2**31) - 1),
    (np.int32, -2.5, -3),
  )
  def test_clamped_floor(self, dtype, value, expected):
    self.assertEqual(tv.clamped_floor(value, dtype), expected)


def _aclnn(g, x, threshold):
  out = np.zeros(np.broadcast_shapes(g.shape, x.shape), x.dtype)
  status, ws, executor = aclnn.threshold_backward_get_workspace_size(
    g, x, threshold, out, soc="host"
  )
  if status == aclnn.ACLNN_SUCCESS:
    status = aclnn.threshold_backward(np.empty(ws, np.uint8) if ws else None, ws, executor)
  assert status == aclnn.ACLNN_SUCCESS, aclnn.recent_error_message()
  return out


# (x dtype, x, threshold, g, expected out): thresholds a conversion via float64 would round
# wrongly, ints beyond int64 and the float range.
REGRESSIONS = [
  ("int64", [-(2**63)], -(2**63) - 1, [5], [5]),
  ("int64", [-(2**63), 2**63 - 1], Fraction(-(2**64) - 1, 2), [5, 6], [5, 6]),
  ("int64", [2**63 - 1], 2**63 - 1, [5], [0]),
  ("float32", [2.0**100 + 2.0**77], 2**100 + 2**76 + 1, [1], [0]),
  ("float32", [1 + 2**-23], ONE_ROUNDING, [1], [0]),
  ("float32", [1 + 2**-23], _decimal(ONE_ROUNDING), [1], [0]),
  ("float16", [1.0], Decimal("0.99999999999999999999999999"), [3], [0]),
  ("bfloat16", [1.0], Fraction(1, 3), [3], [3]),
  ("float64", [1.7e308, math.inf], 2**1024, [1, 2], [0, 0]),
  ("float64", [-1.7e308], -(2**5000), [1], [1]),
  ("float64", [1.0 + 2**-52], Fraction(1) + Fraction(1, 2**53) + Fraction(1, 2**200), [1], [0]),
  ("int32", [2], Decimal("1.999999999999999999999999999999"), [4], [4]),
  ("uint8", [0], Decimal("-0.5"), [4], [4]),
  ("int8", [0, 1], np.longdouble(0.5), [4, 5], [0, 5]),
]


class ExactConversionTest(parameterized.TestCase):
  def _arrays(self, dtype, x, g):
    dtype = np.dtype(BF16 if dtype == "bfloat16" else dtype)
    return np.array(g).astype(dtype), np.array(x).astype(dtype)

  @parameterized.parameters(*REGRESSIONS)
  def test_oracle(self, dtype, x, threshold, g, expected):
    g, x = self._arrays(dtype, x, g)
    np.testing.assert_array_equal(
      oracle.threshold_backward(g, x, threshold), np.array(expected).astype(g.dtype)
    )

  @parameterized.parameters(*REGRESSIONS)
  def test_aclnn(self, dtype, x, threshold, g, expected):
    if aclnn is None:
      self.skipTest("jax_threshold._native is not built")
    g, x = self._arrays(dtype, x, g)
    np.testing.assert_array_equal(_aclnn(g, x, threshold), np.array(expected).astype(g.dtype))

  @parameterized.product(case=REGRESSIONS, implementation=list(jt.available_implementations()))
  def test_jax(self, case, implementation):
    dtype, x, threshold, g, expected = case
    g, x = self._arrays(dtype, x, g)
    with jax.enable_x64(True):
      out = jt.threshold_backward(g, x, threshold, implementation=implementation)
      np.testing.assert_array_equal(np.asarray(out), np.array(expected).astype(g.dtype))

  def test_static_operand_never_overflows(self):
    for threshold in (2**1024, -(2**2000), Fraction(10**400, 3), Decimal("1e400")):
      for dtype in (np.float64, np.float32):
        operand, relu_grad = tv.operand(threshold, dtype)
        self.assertTrue(np.isinf(operand))
        self.assertFalse(relu_grad)

  def test_bools_refused_everywhere(self):
    x = np.ones(3, np.float32)
    with self.assertRaisesRegex(TypeError, "bool"):
      jt.threshold_backward(x, x, True)
    if aclnn is not None:
      for threshold in (True, np.bool_(False), np.array(True)):
        with self.assertRaisesRegex(TypeError, "bool"):
          aclnn.threshold_backward_get_workspace_size(x, x, threshold, x.copy())


if __name__ == "__main__":
  absltest.main()
