"""Tests of jax_threshold.aclnn, the Python face of the two-phase executor (docs/behaviour.md §2, §3).

Status codes in the contract's order, per-SoC dtype lists and platforms, kernel choice, values bit
for bit against the NumPy oracle (tests/oracle.py) for every dtype and every SoC, broadcast and
strided views (and memory outside out's view left alone), concurrent use, and hypothesis
properties of the tiling and the values. The sweeps over every SoC or dtype take their rows from
the native table (tests/dtype_lists.py) and name each case after its row.
"""

import concurrent.futures
from decimal import Decimal
from fractions import Fraction
import math
import os
import unittest

from absl.testing import absltest
from absl.testing import parameterized
import hypothesis
from hypothesis import strategies as st
import jax.numpy as jnp
import ml_dtypes
import numpy as np

import dtype_lists
import oracle

try:
  from jax_threshold import _native  # type: ignore[attr-defined]
  from jax_threshold import aclnn

  _SKIP_REASON = None
except ImportError as e:  # a source tree without the compiled extension
  aclnn = None
  _SKIP_REASON = f"jax_threshold._native is not built ({e}); pip install . to test the executor"

needs_native = unittest.skipIf(aclnn is None, _SKIP_REASON or "")

HOST_DTYPES = list(dtype_lists.SUPPORTED)  # "host" runs the contract's list (test_native_tables)
UNSUPPORTED = dtype_lists.UNSUPPORTED_INTEGER
by_row = dtype_lists.by_row
# Phase one's dtype lists per SoC, at any threshold and at threshold 0, from the native table.
if aclnn is not None:
  SOC_DTYPES = {soc: list(names) for soc, names in aclnn._native.SOC_DTYPES.items()}
  SOC_ZERO_DTYPES = {
    soc: list(names) for soc, names in aclnn._native.SOC_ZERO_THRESHOLD_DTYPES.items()
  }
  # Dtypes phase one refuses: those the table names without a kernel, and one it does not name.
  OTHER_DTYPES = [n for n in aclnn._native.DTYPES if n not in aclnn._native.KERNEL_DTYPES]
  OTHER_DTYPES += [
    next(d.name for d in dtype_lists.numeric_dtypes() if d.name not in aclnn._native.DTYPES)
  ]
  DEFAULT_SOC = _native.DEFAULT_SOC
  SOC_CORE_NUM = _native.SOC_CORE_NUM
  SOC_UB_SIZE = _native.SOC_UB_SIZE  # 0: no unified buffer of its own (the host)
else:  # the tests using them are skipped
  SOC_DTYPES = SOC_ZERO_DTYPES = {"host": [d.name for d in HOST_DTYPES]}
  OTHER_DTYPES = []


_dtype = dtype_lists.by_name


def _random(shape, dtype, rng):
  """Values with the awkward cases mixed in: NaN, +-inf, +-0, ties with common thresholds."""
  dtype = np.dtype(dtype)
  if dtype.kind in "iu":
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    small = rng.integers(-3, 4, size=shape)
    pick = rng.random(shape) < 0.5
    a[pick] = np.clip(small[pick], info.min, info.max).astype(dtype)
    return a
  a = rng.uniform(-4, 4, size=shape)
  special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, 2.5, 1e-9])
  pick = rng.random(shape) < 0.3
  a[pick] = rng.choice(special, size=int(pick.sum()))
  return a.astype(dtype)


def _bits(a):
  return np.ascontiguousarray(a).view(np.uint8)


def _plan(g, x, thr, out, **kw):
  return aclnn.threshold_backward_get_workspace_size(g, x, thr, out, **kw)


def _run(g, x, thr, out, **kw):
  """Both phases; returns the status of the first failing one."""
  status, ws, executor = _plan(g, x, thr, out, **kw)
  if status != aclnn.ACLNN_SUCCESS:
    return status, None
  workspace = np.empty(ws, np.uint8) if ws else None
  return aclnn.threshold_backward(workspace, ws, executor), executor


@needs_native
class StatusCodeTest(parameterized.TestCase):
  def test_codes(self):
    self.assertEqual(aclnn.ACLNN_SUCCESS, 0)
    self.assertEqual(aclnn.ACLNN_ERR_PARAM_NULLPTR, 161001)
    self.assertEqual(aclnn.ACLNN_ERR_PARAM_INVALID, 161002)
    self.assertEqual(aclnn.ACLNN_ERR_INNER_CREATE_EXECUTOR, 561101)
    self.assertEqual(aclnn.ACLNN_ERR_INNER_NULLPTR, 561103)

  # Each step's failure with every later step failing too, so the order is what decides.
  def test_step1_threshold_or_out_null(self):
    bad = np.zeros((2,) * 9, np.bool_)
    out = np.zeros(3, np.float32)
    status, ws, executor = _plan(None, bad, None, out)
    self.assertEqual(status, aclnn.ACLNN_ERR_PARAM_NULLPTR)
    self.assertIsNone(executor)
    self.assertIn("threshold", aclnn.recent_error_message())
    status, _, executor = _plan(None, bad, 1.0, None)
    self.assertEqual(status, aclnn.ACLNN_ERR_PARAM_NULLPTR)
    self.assertIn("out", aclnn.recent_error_message())

  def test_step2_grad_or_x_null(self):
    bad = np.zeros((2,) * 9, np.complex64)
    out = np.zeros(3, np.int16)
    self.assertEqual(_plan(None, bad, 1.0, out)[0], aclnn.ACLNN_ERR_PARAM_NULLPTR)
    self.assertIn("grad_output", aclnn.recent_error_message())
    self.assertEqual(_plan(bad, None, 1.0, out)[0], aclnn.ACLNN_ERR_PARAM_NULLPTR)
    self.assertIn("x is null", aclnn.recent_error_message())

  def test_refused_socs_say_why_for_every_dtype(self):
    for soc in dtype_lists.REFUSED_SOCS:
      for dtype in SOC_DTYPES["host"]:
        with self.subTest(soc=soc, dtype=dtype):
          a = np.zeros(40, _dtype(dtype))
          status, _, executor = _plan(a, a, 0.5, a.copy(), soc=soc)
          self.assertEqual(status, aclnn.ACLNN_ERR_PARAM_INVALID)
          self.assertIsNone(executor)
          message = aclnn.recent_error_message()
          self.assertIn(f"{soc} is not supported", message)
          self.assertIn(dtype, message)

  def test_ascend910_refused_for_its_copies_compares_and_selects(self):
    a = np.zeros(40, np.float32)
    self.assertEqual(_plan(a, a, 0.5, a.copy(), soc="Ascend910")[0], aclnn.ACLNN_ERR_PARAM_INVALID)
    self.assertIn("DataCopyPad", aclnn.recent_error_message())

  @parameterized.named_parameters(*by_row(soc=dtype_lists.KERNEL_SOCS))
  def test_ub_size_beyond_the_soc_is_invalid(self, soc):
    a = np.zeros(40, np.float32)
    ub = SOC_UB_SIZE[soc]
    if not ub:  # no unified buffer of its own: any ub_size phase one takes
      self.assertEqual(_plan(a, a, 0.5, a.copy(), soc=soc, ub_size=1 << 20)[0], aclnn.ACLNN_SUCCESS)
      return
    self.assertEqual(_plan(a, a, 0.5, a.copy(), soc=soc, ub_size=ub)[0], aclnn.ACLNN_SUCCESS)
    self.assertEqual(
      _plan(a, a, 0.5, a.copy(), soc=soc, ub_size=ub + 32)[0], aclnn.ACLNN_ERR_PARAM_INVALID
    )
    self.assertIn(f"unified buffer of {soc}", aclnn.recent_error_message())

  @parameterized.named_parameters(*by_row(soc=dtype_lists.KERNEL_SOCS))
  def test_each_soc_plans_for_its_own_platform_by_default(self, soc):
    a = np.zeros(1 << 20, np.float32)
    status, _, executor = _plan(a, a, 0.5, a.copy(), soc=soc)
    self.assertEqual(status, aclnn.ACLNN_SUCCESS)
    ub = SOC_UB_SIZE[soc] or aclnn.HOST_UB_SIZE
    divisor = dtype_lists.UB_DIVISORS["float32"]
    self.assertEqual(executor.tiling["tile_data_num"], ub // 256 // divisor * 256 // 4)
    self.assertEqual(executor.tiling["block_dim"], SOC_CORE_NUM[soc])

  def test_step3_dtype_before_rank_broadcast_shape(self):
    g = np.zeros((2,) * 9, UNSUPPORTED)
    x = np.zeros((3,) * 9, UNSUPPORTED)
    out = np.zeros(5, UNSUPPORTED)
    status, _, executor = _plan(g, x, 1.0, out)
    self.assertEqual(status, aclnn.ACLNN_ERR_PARAM_INVALID)
    self.assertIsNone(executor)
    message = aclnn.recent_error_message()
    self.assertIn(UNSUPPORTED.name, message)
    self.assertIn(f"(supported: {', '.join(SOC_DTYPES[DEFAULT_SOC])})", message)

  def test_step3_mismatched_dtypes(self):
    g = np.zeros((2,) * 9, np.float32)
    x = np.zeros((3,) * 9, np.float16)
    out = np.zeros(5, np.float16)
    self.assertEqual(_plan(g, x, 1.0, out)[0], aclnn.ACLNN_ERR_PARAM_INVALID)
    self.assertIn("differs", aclnn.recent_error_message())
    x = np.zeros((3,) * 9, np.float32)
    out = np.zeros(5, np.float16)
    self.assertEqual(_plan(g, x, 1.0, out)[0], aclnn.ACLNN_ERR_PARAM_INVALID)
    self.assertIn("out dtype float16", aclnn.recent_error_message())

  def test_step4_rank(self):
    g = np.zeros((2,) * 9, np.float32)
    x = np.zeros((3,) * 9, np.float32)
    out = np.zeros(5, np.float32)
    self.assertEqual(_plan(g, x, 1.0, out)[0], aclnn.ACLNN_ERR_PARAM_INVALID)
    self.assertIn("rank 9", aclnn.recent_error_message())
    ok = np.zeros((1,) * 8, np.float32)
    self.assertEqual(_plan(ok, ok, 1.0, ok.copy())[0], aclnn.ACLNN_SUCCESS)

  def test_step5_broadcast(self):
    g = np.zeros((2, 3), np.float32)
    x = np.zeros((0, 4), np.float32)  # empty as well
    out = np.zeros(7, np.float32)
    self.assertEqual(_plan(g, x, 1.0, out)[0], aclnn.ACLNN_ERR_PARAM_INVALID)
    self.assertIn("do not broadcast", aclnn.recent_error_message())

  def test_step6_out_shape(self):
    g = np.zeros((0, 1), np.float32)
    x = np.zeros(3, np.float32)
    for shape in [(3,), (3, 0), (0, 3, 1)]:
      self.assertEqual(
        _plan(g, x, 1.0, np.zeros(shape, np.float32))[0], aclnn.ACLNN_ERR_PARAM_INVALID
      )
      self.assertIn("out shape", aclnn.recent_error_message())

  @parameterized.parameters(((0,), (0,)), ((0, 1), (3,)), ((), (2, 0)), ((5, 0, 2), (1,)))
  def test_step7_empty(self, g_shape, x_shape):
    g = np.zeros(g_shape, np.float32)
    x = np.zeros(x_shape, np.float32)
    out = np.zeros(np.broadcast_shapes(g_shape, x_shape), np.float32)
    status, ws, executor = _plan(g, x, 1.0, out)
    self.assertEqual(status, aclnn.ACLNN_SUCCESS)
    self.assertEqual(ws, 0)
    self.assertIsNotNone(executor)
    self.assertEqual(executor.kernel, "")
    self.assertIsNone(executor.tiling)
    self.assertEqual(aclnn.threshold_backward(None, 0, executor), aclnn.ACLNN_SUCCESS)
    self.assertEqual(aclnn.threshold_backward(None, 0, executor), aclnn.ACLNN_ERR_PARAM_INVALID)

  @parameterized.parameters(
    (0.0, "ReluGrad"),
    (-0.0, "ReluGrad"),
    (0, "ReluGrad"),
    (np.float16(-0.0), "ReluGrad"),
    (np.uint8(0), "ReluGrad"),
    (Fraction(0), "ReluGrad"),
    (Decimal("-0"), "ReluGrad"),
    (1e-9, "ThresholdGradV2D"),
    (1e-50, "ThresholdGradV2D"),
    (Fraction(1, 10**400), "ThresholdGradV2D"),
    (-1e-30, "ThresholdGradV2D"),
    (float("nan"), "ThresholdGradV2D"),
    (1, "ThresholdGradV2D"),
    (np.float32(0.5), "ThresholdGradV2D"),
  )
  def test_step8_kernel(self, threshold, kernel):
    a = np.ones(10, np.float32)
    status, _, executor = _plan(a, a, threshold, a.copy())
    self.assertEqual(status, aclnn.ACLNN_SUCCESS)
    self.assertEqual(executor.kernel, kernel)

  @parameterized.named_parameters(
    *by_row(soc=dtype_lists.SOCS, dtype=SOC_DTYPES["host"] + OTHER_DTYPES, threshold=[0.0, 0.5])
  )
  def test_soc_dtype_lists(self, soc, dtype, threshold):
    a = np.zeros(4, _dtype(dtype))
    status, _, executor = _plan(a, a, threshold, a.copy(), soc=soc)
    supported = dtype in (SOC_ZERO_DTYPES if threshold == 0.0 else SOC_DTYPES)[soc]
    if supported:
      self.assertEqual(status, aclnn.ACLNN_SUCCESS)
      self.assertEqual(executor.kernel, "ReluGrad" if threshold == 0.0 else "ThresholdGradV2D")
    else:
      self.assertEqual(status, aclnn.ACLNN_ERR_PARAM_INVALID)
      self.assertIsNone(executor)
      # Named as NumPy / ml_dtypes name it, also where the dtype has no aclDataType.
      self.assertIn(f"has dtype {np.dtype(_dtype(dtype)).name}", aclnn.recent_error_message())

  def test_threshold_types(self):
    a = np.ones(4, np.float32)
    self.assertEqual(_plan(a, a, 1 + 2j, a.copy())[0], aclnn.ACLNN_ERR_PARAM_INVALID)
    self.assertEqual(_plan(a, a, np.complex64(1), a.copy())[0], aclnn.ACLNN_ERR_PARAM_INVALID)
    self.assertIn("threshold", aclnn.recent_error_message())
    with self.assertRaisesRegex(TypeError, "threshold must be a real number"):
      _plan(a, a, "1.0", a.copy())
    with self.assertRaisesRegex(ValueError, "scalar"):
      _plan(a, a, np.ones(2), a.copy())
    for threshold in (
      np.array(0.5),
      2**64 - 1,
      2**80,
      -(2**5000),
      Fraction(1, 3),
      Decimal("0.1"),
      Decimal("-Infinity"),
      np.longdouble(2.5),
      ml_dtypes.bfloat16(3),
      np.array(7, np.int8),
    ):
      self.assertEqual(_plan(a, a, threshold, a.copy())[0], aclnn.ACLNN_SUCCESS)

  def test_dtype_without_an_acl_code_is_named(self):
    f8, f32 = np.ones(4, ml_dtypes.float8_e4m3fn), np.ones(4, np.float32)
    self.assertEqual(_plan(f32, f32, 0.5, f8)[0], aclnn.ACLNN_ERR_PARAM_INVALID)
    self.assertIn(
      "out dtype float8_e4m3fn differs from x dtype float32", aclnn.recent_error_message()
    )
    self.assertEqual(_plan(f32, f32, 0.5, f32.copy())[0], aclnn.ACLNN_SUCCESS)
    # A success does not change the last failure's message (aclGetRecentErrMsg's rule).
    self.assertIn("float8_e4m3fn", aclnn.recent_error_message())
    self.assertEqual(
      _plan(np.ones(4, UNSUPPORTED), f32, 0.5, f32.copy())[0], aclnn.ACLNN_ERR_PARAM_INVALID
    )
    self.assertIn(UNSUPPORTED.name, aclnn.recent_error_message())
    self.assertNotIn("float8", aclnn.recent_error_message())

  @parameterized.parameters(
    (lambda: jnp.float32(0.5), "ThresholdGradV2D"),
    (lambda: jnp.asarray(0.0, jnp.bfloat16), "ReluGrad"),
    (lambda: jnp.asarray(-0.0), "ReluGrad"),
    (lambda: jnp.int32(2), "ThresholdGradV2D"),
    (lambda: jnp.asarray(np.float16(1.5)), "ThresholdGradV2D"),
  )
  def test_jax_scalar_threshold(self, make, kernel):
    threshold = make()
    x = np.array([-1.0, 0.0, 0.4, 0.5, 1.0, 1.5, 2.0, 3.0], np.float32)
    g = np.arange(1, 9, dtype=np.float32)
    out = np.empty_like(x)
    status, size, executor = _plan(g, x, threshold, out)
    self.assertEqual(status, aclnn.ACLNN_SUCCESS)
    self.assertEqual(executor.kernel, kernel)
    workspace = np.empty(size, np.uint8) if size else None
    self.assertEqual(aclnn.threshold_backward(workspace, size, executor), aclnn.ACLNN_SUCCESS)
    np.testing.assert_array_equal(out, oracle.threshold_backward(g, x, np.asarray(threshold)))

  def test_jax_threshold_that_is_not_a_real_scalar(self):
    a = np.ones(4, np.float32)
    with self.assertRaisesRegex(TypeError, "bool"):
      _plan(a, a, jnp.asarray(True), a.copy())
    with self.assertRaisesRegex(ValueError, "scalar"):
      _plan(a, a, jnp.ones(2), a.copy())
    self.assertEqual(_plan(a, a, jnp.complex64(1), a.copy())[0], aclnn.ACLNN_ERR_PARAM_INVALID)

  # Bools are refused, as jax_threshold.threshold_backward refuses them.
  @parameterized.parameters((True,), (False,), (np.bool_(True),), (np.array(False),))
  def test_bool_threshold_refused(self, threshold):
    a = np.ones(4, np.float32)
    with self.assertRaisesRegex(TypeError, "bool"):
      _plan(a, a, threshold, a.copy())

  # The executor gets a threshold that is exactly the comparison: already rounded for floats,
  # floor(t) clamped for integers, the kernel still chosen by the given value being 0.
  @parameterized.parameters(
    (np.float16, 1 + 2**-11 + 2**-40, "threshold_f32", 1 + 2**-11),
    (
      np.float32,
      Fraction(1) + Fraction(1, 2**24) + Fraction(1, 2**60),
      "threshold_f32",
      1 + 2**-23,
    ),
    (np.float32, 2**100 + 2**76 + 1, "threshold_f32", 2.0**100 + 2.0**77),
    (np.float64, 2**1024, "threshold_f64", math.inf),
    (np.float64, Decimal("0.1"), "threshold_f64", 0.1),
    (np.int64, -(2**63) - 1, "mode", "all_pass"),
    (np.int64, Fraction(2**70 + 1, 2), "mode", "none_pass"),
    (np.int32, Decimal("0.5"), "threshold_int", 0),
    (np.int32, Fraction(-5, 2), "threshold_int", -3),
  )
  def test_threshold_handed_over(self, dtype, threshold, field, expected):
    a = np.zeros(3, dtype)
    status, _, executor = _plan(a, a, threshold, a.copy(), soc="host")
    self.assertEqual(status, aclnn.ACLNN_SUCCESS)
    self.assertEqual(executor.kernel, "ThresholdGradV2D")
    self.assertEqual(executor.threshold_params[field], expected)

  def test_dtypes_only_relu_grad_runs_need_exactly_zero(self):
    for soc, names in SOC_ZERO_DTYPES.items():
      for dtype in set(names) - set(SOC_DTYPES[soc]):
        with self.subTest(soc=soc, dtype=dtype):
          a = np.zeros(3, _dtype(dtype))
          for zero in (0, -0.0, Fraction(0)):
            self.assertEqual(_plan(a, a, zero, a.copy(), soc=soc)[0], aclnn.ACLNN_SUCCESS)
          for threshold in (0.5, Fraction(1, 3), Decimal("-0.25"), 1e-300):
            self.assertEqual(
              _plan(a, a, threshold, a.copy(), soc=soc)[0], aclnn.ACLNN_ERR_PARAM_INVALID
            )

  def test_bad_python_arguments(self):
    a = np.ones(4, np.float32)
    with self.assertRaisesRegex(TypeError, "numpy.ndarray"):
      _plan([1.0], a, 1.0, a.copy())
    ro = a.copy()
    ro.flags.writeable = False
    with self.assertRaisesRegex(ValueError, "read-only"):
      _plan(a, a, 1.0, ro)
    with self.assertRaisesRegex(ValueError, "unknown soc"):
      _plan(a, a, 1.0, a.copy(), soc="Ascend310")
    odd = np.zeros(9, np.uint8)[1:].view(np.float32)[:1]  # element-unaligned: copied byte-wise
    self.assertEqual(_plan(odd, odd, 1.0, odd.copy())[0], aclnn.ACLNN_SUCCESS)

  def test_run_errors(self):
    self.assertEqual(aclnn.threshold_backward(None, 0, None), aclnn.ACLNN_ERR_PARAM_NULLPTR)
    g = np.ones((4, 4), np.float32)
    out = np.zeros((4, 4), np.float32).T  # strided out: needs workspace
    status, ws, executor = _plan(g, g, 0.5, out)
    self.assertEqual(status, aclnn.ACLNN_SUCCESS)
    self.assertGreater(ws, 0)
    self.assertEqual(executor.copies, (False, False, True))
    self.assertEqual(aclnn.threshold_backward(None, ws, executor), aclnn.ACLNN_ERR_PARAM_NULLPTR)
    workspace = np.empty(ws, np.uint8)
    self.assertEqual(
      aclnn.threshold_backward(workspace, ws - 1, executor), aclnn.ACLNN_ERR_PARAM_INVALID
    )
    self.assertIn("smaller", aclnn.recent_error_message())
    with self.assertRaisesRegex(ValueError, "less than"):
      aclnn.threshold_backward(workspace[:-1], ws, executor)
    with self.assertRaisesRegex(TypeError, "uint8"):
      aclnn.threshold_backward(workspace.view(np.int8), ws, executor)
    self.assertEqual(aclnn.threshold_backward(workspace, ws, executor), aclnn.ACLNN_SUCCESS)
    np.testing.assert_array_equal(out, np.ones((4, 4), np.float32))
    self.assertEqual(
      aclnn.threshold_backward(workspace, ws, executor), aclnn.ACLNN_ERR_PARAM_INVALID
    )
    self.assertIn("already run", aclnn.recent_error_message())

  # ub_size / core_num are validated in phase one, so phase two never runs with them; that the
  # process survives such a call is checked in a subprocess in HostileCallsDoNotCrashTest.
  @parameterized.named_parameters(*by_row(soc=dtype_lists.KERNEL_SOCS))
  def test_platform_params_refused(self, soc):
    a = np.ones(4, np.float32)
    for name, value in [
      ("ub_size", 512),
      ("ub_size", 2000),
      ("ub_size", 16384 - 32),
      ("ub_size", 2**40),
      ("ub_size", 2**64 - 1),
      ("ub_size", 0),
      ("core_num", 0),
      ("core_num", 4097),
      ("core_num", 2**32 - 1),
    ]:
      with self.subTest(**{name: value}):
        status, _, executor = _plan(a, a, 0.5, a.copy(), soc=soc, **{name: value})
        self.assertEqual(status, aclnn.ACLNN_ERR_PARAM_INVALID)
        self.assertIsNone(executor)
        self.assertIn(name, aclnn.recent_error_message())

  def test_platform_params_python_types(self):
    a = np.ones(4, np.float32)
    with self.assertRaises(ValueError):
      _plan(a, a, 0.5, a.copy(), core_num=-1)
    with self.assertRaises(ValueError):
      _plan(a, a, 0.5, a.copy(), ub_size=2**64)
    with self.assertRaises(TypeError):
      _plan(a, a, 0.5, a.copy(), core_num=True)
    with self.assertRaises(TypeError):
      _plan(a, a, 0.5, a.copy(), ub_size=16384.0)
    self.assertEqual(
      _plan(a, a, 0.5, a.copy(), ub_size=np.int64(16384), core_num=4096)[0], aclnn.ACLNN_SUCCESS
    )

  # A broadcast whose element count overflows int64 is refused, and the message says so.
  def test_broadcast_overflow_is_named(self):
    g = np.lib.stride_tricks.as_strided(np.zeros(1, np.float32), (2**32, 1), (0, 0))
    x = np.lib.stride_tricks.as_strided(np.zeros(1, np.float32), (1, 2**32), (0, 0))
    self.assertEqual(_plan(g, x, 0.5, np.zeros(1, np.float32))[0], aclnn.ACLNN_ERR_PARAM_INVALID)
    self.assertIn("overflows int64", aclnn.recent_error_message())

  # A byte-swapped array would be read as if native; it is refused.
  def test_byte_swapped_refused(self):
    native = np.arange(4, dtype=np.int32)
    swapped = native.astype(native.dtype.newbyteorder("S"))
    for args, name in [
      ((swapped, native, native.copy()), "grad_output"),
      ((native, swapped, native.copy()), "x"),
      ((native, native, swapped.copy()), "out"),
    ]:
      with self.assertRaisesRegex(ValueError, f"{name} .*byte order"):
        _plan(args[0], args[1], 1, args[2])
    # One-byte dtypes have no byte order; converted arrays are fine.
    b = np.arange(4, dtype=">u1")
    self.assertEqual(_run(b, b, 1, np.zeros(4, np.uint8))[0], aclnn.ACLNN_SUCCESS)
    fixed = swapped.astype(swapped.dtype.newbyteorder("="))
    out = np.zeros(4, np.int32)
    self.assertEqual(_run(fixed + 4, fixed, 1, out)[0], aclnn.ACLNN_SUCCESS)
    np.testing.assert_array_equal(out, [0, 0, 6, 7])


# Calls that could overflow the heap or abort the process if a check were missing (a workspace
# size that overflows, unaligned data, bad platform parameters); each runs in a subprocess, so
# a crash is a failed test, not a dead pytest.
_CRASH_PRELUDE = f"""
import ml_dtypes
import numpy as np
from jax_threshold import aclnn
HOST_DTYPES = [np.dtype(getattr(ml_dtypes, n, None) or n) for n in {[d.name for d in HOST_DTYPES]!r}]
def plan(g, x, out, **kw):
  return aclnn.threshold_backward_get_workspace_size(g, x, 0.5, out, **kw)
def run(g, x, out, **kw):
  status, ws, executor = plan(g, x, out, **kw)
  if status:
    return status
  return aclnn.threshold_backward(np.empty(ws, np.uint8) if ws else None, ws, executor)
"""

_CRASH_CASES = {
  "workspace_overflow": """
n = 512 * ((2**55 + 1) // 3)
view = lambda: np.lib.stride_tricks.as_strided(np.zeros(1, np.int8), (n,), (0,))
status, ws, executor = plan(view(), view(), view())
assert status == aclnn.ACLNN_ERR_PARAM_INVALID, (status, ws)
assert executor is None
assert "overflow" in aclnn.recent_error_message(), aclnn.recent_error_message()
""",
  "unaligned": """
for dtype in HOST_DTYPES:
  size = dtype.itemsize
  if size == 1:
    continue
  def unaligned(values):
    buf = np.zeros(len(values) * size + 1, np.uint8)
    a = buf[1:].view(dtype)
    a[...] = values
    assert a.__array_interface__["data"][0] % size
    return a
  g = np.arange(1, 1001).astype(dtype)
  x = (np.arange(1000) % 3).astype(dtype)
  expected = np.where(x > 0.5, g, 0).astype(dtype)
  for which in range(3):
    args = [g.copy(), x.copy(), np.zeros(1000, dtype)]
    args[which] = unaligned(args[which])
    assert run(*args, soc="host") == 0, aclnn.recent_error_message()
    assert (args[2] == expected).all(), (dtype, which)
""",
  "platform": """
a = np.ones(1000, np.float32)
for kw in (dict(ub_size=2000), dict(ub_size=2**40), dict(ub_size=100), dict(core_num=0)):
  assert run(a, a, a.copy(), **kw) == aclnn.ACLNN_ERR_PARAM_INVALID, kw
""",
}


@needs_native
class HostileCallsDoNotCrashTest(parameterized.TestCase):
  @parameterized.parameters(*_CRASH_CASES)
  def test_no_crash(self, case):
    import subprocess
    import sys

    # Run where the source tree cannot shadow the installed package (as conftest.py arranges).
    package_dir = os.path.dirname(os.path.dirname(os.path.abspath(aclnn.__file__)))
    code = (
      f"import sys; sys.path.insert(0, {package_dir!r})\n" + _CRASH_PRELUDE + _CRASH_CASES[case]
    )
    result = subprocess.run(
      [sys.executable, "-c", code],
      cwd=os.path.dirname(package_dir),
      capture_output=True,
      text=True,
      timeout=300,
    )
    self.assertEqual(result.returncode, 0, f"{case}: rc {result.returncode}\n{result.stderr}")


@needs_native
class ValuesTest(parameterized.TestCase):
  def _check(self, g, x, thr, out, **kw):
    kw.setdefault("soc", "host")
    status, executor = _run(g, x, thr, out, **kw)
    self.assertEqual(status, aclnn.ACLNN_SUCCESS, aclnn.recent_error_message())
    expected = oracle.threshold_backward(g, x, thr)
    np.testing.assert_array_equal(_bits(out), _bits(expected.astype(out.dtype)))
    return executor

  def test_cann_documentation_example(self):
    x = np.array([0.2, 1.2, 2.2, 3.2], np.float32).reshape(2, 2)
    g = np.array([4.5, 4.4, 4.3, 4.2], np.float32).reshape(2, 2)
    out = np.empty_like(x)
    self.assertEqual(_run(g, x, 1.0, out)[0], aclnn.ACLNN_SUCCESS)
    np.testing.assert_array_equal(out, np.array([[0, 4.4], [4.3, 4.2]], np.float32))
    self.assertEqual(_run(g, x, 0.0, out)[0], aclnn.ACLNN_SUCCESS)  # not what the article says
    np.testing.assert_array_equal(out, g)

  @parameterized.named_parameters(
    *by_row(dtype=HOST_DTYPES, n=[1, 7, 256, 1001, 70001], threshold=[0.0, 1.0, 2.5, -1.5, 1e-9])
  )
  def test_every_dtype(self, dtype, n, threshold):
    rng = np.random.default_rng(n)
    g, x = _random(n, dtype, rng), _random(n, dtype, rng)
    out = np.full(n, 7, dtype)
    executor = self._check(g, x, threshold, out)
    self.assertEqual(executor.kernel, "ReluGrad" if threshold == 0 else "ThresholdGradV2D")

  @parameterized.product(
    dtype=["int8", "uint8", "int32", "int64"],
    threshold=[
      float("nan"),
      float("inf"),
      -float("inf"),
      127.5,
      -128.5,
      255.0,
      2147483647.5,
      -2147483648.5,
      9.3e18,
      -9.3e18,
      16777217,
      -1,
      2**63 - 1,
      -(2**63),
      2**64 - 1,
      2**70,
      np.int8(-128),
      np.uint8(200),
      np.float16(3.5),
      ml_dtypes.bfloat16(-2.5),
    ],
  )
  def test_integer_thresholds_exact(self, dtype, threshold):
    rng = np.random.default_rng(1)
    g, x = _random(300, dtype, rng), _random(300, dtype, rng)
    x[:4] = np.iinfo(dtype).min, np.iinfo(dtype).max, 0, -1 if dtype != "uint8" else 1
    self._check(g, x, threshold, np.zeros(300, dtype))

  @parameterized.named_parameters(*by_row(dtype=HOST_DTYPES, threshold=[0.0, 0.5]))
  def test_broadcast_and_scalars(self, dtype, threshold):
    rng = np.random.default_rng(2)
    for g_shape, x_shape in [
      ((), ()),
      ((), (5, 3)),
      ((5, 3), ()),
      ((4, 1, 3), (1, 7, 1)),
      ((3,), (2, 5, 3)),
      ((1, 1), (1,)),
      ((2, 1, 1, 1, 1, 1, 1, 3), (4, 1, 1, 1, 1, 1, 3)),
    ]:
      g, x = _random(g_shape, dtype, rng), _random(x_shape, dtype, rng)
      out = np.zeros(np.broadcast_shapes(g_shape, x_shape), dtype)
      self._check(g, x, threshold, out)

  @parameterized.named_parameters(*by_row(dtype=HOST_DTYPES, threshold=[0.0, 1.0]))
  def test_strided_views_and_untouched_memory(self, dtype, threshold):
    rng = np.random.default_rng(3)
    g_base = _random((12, 20), dtype, rng)
    x_base = _random((20, 12), dtype, rng)
    g = g_base[::2, 1::4]  # (6, 5), strided
    x = x_base[2:7, ::-2].T[::-1]  # (6, 5), transposed and reversed
    out_base = np.full((9, 16), 99, dtype)
    out = out_base[1:7, 2:12:2]  # (6, 5), strided, inside a bigger buffer
    sentinel = out_base.copy()
    status, executor = _run(g, x, threshold, out, soc="host")
    self.assertEqual(status, aclnn.ACLNN_SUCCESS)
    self.assertEqual(executor.kernel, "ReluGrad" if threshold == 0 else "ThresholdGradV2D")
    np.testing.assert_array_equal(_bits(out), _bits(oracle.threshold_backward(g, x, threshold)))
    mask = np.ones(out_base.shape, bool)
    mask[1:7, 2:12:2] = False
    np.testing.assert_array_equal(_bits(out_base[mask]), _bits(sentinel[mask]))
    # The inputs are left alone too.
    self.assertTrue(np.shares_memory(g, g_base))

  def test_transposed_out_and_broadcast_grad(self):
    rng = np.random.default_rng(4)
    x = _random((33, 65), np.float32, rng)
    g = _random((65,), np.float32, rng)
    out = np.zeros((65, 33), np.float32).T
    status, executor = _run(g, x, 0.25, out)
    self.assertEqual(status, aclnn.ACLNN_SUCCESS)
    # The kernel reads the broadcast grad where it is; only out's view needs a copy.
    self.assertEqual(executor.copies, (False, False, True))
    np.testing.assert_array_equal(_bits(out), _bits(oracle.threshold_backward(g, x, 0.25)))

  @parameterized.parameters(
    (np.int8, 127.5, "compare", 127),
    (np.int8, 128.0, "none_pass", 0),
    (np.int8, -128.5, "all_pass", 0),
    (np.int8, -128, "compare", -128),
    (np.uint8, -0.5, "all_pass", 0),
    (np.uint8, 2.5, "compare", 2),
    (np.int32, -2.5, "compare", -3),
    (np.int64, float("nan"), "none_pass", 0),
    (np.int64, 2**64 - 1, "none_pass", 0),
    (np.int64, -(2**63), "compare", -(2**63)),
    (np.int32, float("-inf"), "all_pass", 0),
  )
  def test_integer_threshold_params(self, dtype, threshold, mode, k):
    a = np.zeros(3, dtype)
    status, _, executor = _plan(a, a, threshold, a.copy(), soc="host")
    self.assertEqual(status, aclnn.ACLNN_SUCCESS)
    params = executor.threshold_params
    self.assertEqual(params["mode"], mode)
    if mode == "compare":
      self.assertEqual(params["threshold_int"], k)

  def test_float_threshold_rounded_once_to_float32(self):
    a = np.zeros(3, np.float16)
    # 1 + 2^-11 + 2^-40: float32 rounds it to 1 + 2^-11, not to a float16 neighbour.
    t = 1 + 2**-11 + 2**-40
    status, _, executor = _plan(a, a, t, a.copy())
    self.assertEqual(status, aclnn.ACLNN_SUCCESS)
    self.assertEqual(executor.threshold_params["threshold_f32"], float(np.float32(t)))
    x = np.array([1, 1 + 2**-10, 1 + 2**-11], np.float32).astype(np.float16)
    g = np.ones(3, np.float16)
    out = np.zeros(3, np.float16)
    self.assertEqual(_run(g, x, t, out)[0], aclnn.ACLNN_SUCCESS)
    np.testing.assert_array_equal(out, np.array([0, 1, 0], np.float16))

  def test_contiguous_is_zero_copy(self):
    a = np.ones((3, 4), np.float32)
    status, ws, executor = _plan(a, a, 0.5, a.copy())
    self.assertEqual((status, ws, executor.copies), (0, 0, (False, False, False)))

  def test_in_place_out_aliasing_grad(self):
    rng = np.random.default_rng(5)
    g = _random(5000, np.float32, rng)
    x = _random(5000, np.float32, rng)
    expected = oracle.threshold_backward(g, x, 0.5)
    self.assertEqual(_run(g, x, 0.5, g)[0], aclnn.ACLNN_SUCCESS)
    np.testing.assert_array_equal(_bits(g), _bits(expected))

  # out partly overlapping an input gives copy semantics.
  @parameterized.named_parameters(*by_row(dtype=HOST_DTYPES, shift=[1, -1, 7]))
  def test_partial_overlap_copy_semantics(self, dtype, shift):
    rng = np.random.default_rng(7)
    n = 20000
    buf = _random(n + abs(shift), dtype, rng)
    x = _random(n, dtype, rng)
    g, out = (buf[shift:], buf[:-shift]) if shift > 0 else (buf[:shift], buf[-shift:])
    expected = oracle.threshold_backward(g.copy(), x, 0.5)
    self.assertEqual(_run(g, x, 0.5, out, soc="host")[0], aclnn.ACLNN_SUCCESS)
    np.testing.assert_array_equal(_bits(out), _bits(expected))
    # x overlapping a transposed out (the copy into out runs after the kernel read x).
    sq = _random((64, 64), dtype, rng)
    g2 = _random((64, 64), dtype, rng)
    expected = oracle.threshold_backward(g2, sq.copy(), 0.0)
    self.assertEqual(_run(g2, sq, 0.0, sq.T, soc="host")[0], aclnn.ACLNN_SUCCESS)
    np.testing.assert_array_equal(_bits(sq.T), _bits(expected))

  def test_in_place_on_x_and_both(self):
    rng = np.random.default_rng(8)
    g, x = _random(3000, np.float32, rng), _random(3000, np.float32, rng)
    expected = oracle.threshold_backward(g, x, 0.5)
    status, executor = _run(g, x, 0.5, x)
    self.assertEqual(status, aclnn.ACLNN_SUCCESS)
    np.testing.assert_array_equal(_bits(x), _bits(expected))
    both = _random(3000, np.float32, rng)
    expected = oracle.threshold_backward(both, both, 0.5)
    status, ws, executor = _plan(both, both, 0.5, both)
    self.assertEqual((status, ws, executor.copies), (aclnn.ACLNN_SUCCESS, 0, (False,) * 3))
    self.assertEqual(aclnn.threshold_backward(None, 0, executor), aclnn.ACLNN_SUCCESS)
    np.testing.assert_array_equal(_bits(both), _bits(expected))

  # Every dtype a SoC lists, on its own core count (None) and on others; the plan is the tiling's
  # for that SoC's platform.
  @parameterized.named_parameters(*by_row(soc=dtype_lists.KERNEL_SOCS))
  def test_socs_and_core_counts(self, soc):
    rng = np.random.default_rng(6)
    for dtype in map(_dtype, SOC_DTYPES[soc]):
      for core_num in (1, 3, 48, None):
        g, x = _random(50001, dtype, rng), _random(50001, dtype, rng)
        out = np.zeros(50001, dtype)
        executor = self._check(g, x, 0.25, out, soc=soc, core_num=core_num)
        tiling = aclnn.threshold_grad_v2_d_tiling(50001, dtype, core_num=core_num, soc=soc)
        self.assertEqual(executor.tiling, tiling)
        self.assertLessEqual(tiling["block_dim"], core_num or SOC_CORE_NUM[soc])

  # The kernels run under the AscendC rules of the executor's SoC (UB budget, Casts, compares,
  # DataCopyPad): every dtype a SoC lists, with tails that are not whole 32-byte blocks.
  @parameterized.named_parameters(*by_row(soc=dtype_lists.KERNEL_SOCS))
  def test_every_listed_dtype_runs_under_its_soc(self, soc):
    rng = np.random.default_rng(14)
    for dtype in SOC_ZERO_DTYPES[soc]:
      for n in (5, 33, 20011):
        g, x = _random(n, _dtype(dtype), rng), _random(n, _dtype(dtype), rng)
        thresholds = (0.0, 0.5, -2) if dtype in SOC_DTYPES[soc] else (0.0,)
        for threshold in thresholds:
          self._check(g, x, threshold, np.zeros(n, _dtype(dtype)), soc=soc)

  def test_many_threads(self):
    def work(seed):
      rng = np.random.default_rng(seed)
      dtype = HOST_DTYPES[seed % len(HOST_DTYPES)]
      g = _random((17, 1), dtype, rng)
      x = _random((17, 301), dtype, rng)
      out = np.zeros((301, 17), dtype).T
      threshold = 0.0 if seed % 3 == 0 else 0.5
      status, _ = _run(g, x, threshold, out, soc="host")
      return status, out, oracle.threshold_backward(g, x, threshold)

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
      for status, out, expected in pool.map(work, range(48)):
        self.assertEqual(status, aclnn.ACLNN_SUCCESS)
        np.testing.assert_array_equal(_bits(out), _bits(expected))

  @hypothesis.settings(max_examples=60, deadline=None)
  @hypothesis.given(
    dtype=st.sampled_from(HOST_DTYPES),
    shapes=st.tuples(
      st.lists(st.integers(1, 6), max_size=4), st.lists(st.integers(1, 6), max_size=4)
    ),
    threshold=st.one_of(st.floats(-5, 5), st.integers(-300, 300), st.just(0.0)),
    seed=st.integers(0, 2**32 - 1),
  )
  def test_property_values(self, dtype, shapes, threshold, seed):
    g_shape, x_shape = map(tuple, shapes)
    # Make the shapes broadcast: where they disagree, set x's dim to 1.
    x_shape = list(x_shape)
    for i in range(1, min(len(g_shape), len(x_shape)) + 1):
      if g_shape[-i] != x_shape[-i] and g_shape[-i] != 1:
        x_shape[-i] = 1
    x_shape = tuple(x_shape)
    rng = np.random.default_rng(seed)
    g, x = _random(g_shape, dtype, rng), _random(x_shape, dtype, rng)
    out = np.zeros(np.broadcast_shapes(g_shape, x_shape), dtype)
    self._check(g, x, threshold, out)


@needs_native
class TilingTest(parameterized.TestCase):
  # The default SoC's tiles (ub 196608, 48 cores), docs/behaviour.md §3's worked values among them.
  @parameterized.parameters(
    (np.float32, 6976),
    (np.float16, 13952),
    (np.int32, 6144),
    (ml_dtypes.bfloat16, 9728),
    (np.int8, 13824),
    (np.uint8, 13824),
    (np.int64, 3072),
    (np.float64, 3072),
  )
  def test_worked_tile_data_num(self, dtype, expected):
    self.assertEqual(aclnn.threshold_grad_v2_d_tiling(1 << 20, dtype)["tile_data_num"], expected)
    self.assertEqual(aclnn.relu_grad_tiling(1 << 20, dtype)["tile_data_num"], expected)

  # Every kernel dtype on every SoC's own unified buffer: its UB divisor's tile.
  @parameterized.named_parameters(*by_row(dtype=HOST_DTYPES, soc=dtype_lists.SOCS))
  def test_tile_data_num(self, dtype, soc):
    ub = SOC_UB_SIZE[soc] or aclnn.HOST_UB_SIZE
    tile_blocks = ub // 256 // dtype_lists.UB_DIVISORS[dtype.name]
    for tiling in (aclnn.threshold_grad_v2_d_tiling, aclnn.relu_grad_tiling):
      self.assertEqual(
        tiling(1 << 20, dtype, soc=soc)["tile_data_num"], tile_blocks * 256 // dtype.itemsize
      )

  # Without ub_size / core_num the tilings plan for the SoC's own platform, as phase one does.
  @parameterized.named_parameters(*by_row(soc=dtype_lists.KERNEL_SOCS))
  def test_default_platform_is_the_socs(self, soc):
    n = 300001
    for dtype in map(_dtype, SOC_ZERO_DTYPES[soc]):
      a = np.zeros(n, dtype)
      for threshold, tiling in (
        (0, aclnn.relu_grad_tiling),
        (0.5, aclnn.threshold_grad_v2_d_tiling),
      ):
        if threshold and dtype.name not in SOC_DTYPES[soc]:
          continue
        with self.subTest(dtype=dtype.name, threshold=threshold):
          status, _, executor = _plan(a, a, threshold, a.copy(), soc=soc)
          self.assertEqual(status, aclnn.ACLNN_SUCCESS)
          self.assertEqual(tiling(n, dtype, soc=soc), executor.tiling)
          self.assertEqual(executor.tiling["block_dim"], SOC_CORE_NUM[soc])

  def test_worked_values(self):
    t = aclnn.threshold_grad_v2_d_tiling(100000, np.float32)
    self.assertEqual(
      (t["block_dim"], t["tail_block_num"], t["small_core_data_num"], t["big_core_data_num"]),
      (48, 27, 2048, 2112),
    )
    t = aclnn.threshold_grad_v2_d_tiling(1 * 2 * 8 * 16, np.float32)
    self.assertEqual(
      (
        t["block_dim"],
        t["small_core_data_num"],
        t["big_core_data_num"],
        t["small_tail_data_num"],
        t["big_tail_data_num"],
      ),
      (1, 256, 320, 256, 320),
    )
    self.assertEqual(t["tiling_key"], 0)

  def test_executor_tiling_matches(self):
    g = np.ones(100000, np.float32)
    status, _, executor = _plan(g, g, 0.5, g.copy())
    self.assertEqual(status, 0)
    self.assertEqual(executor.tiling, aclnn.threshold_grad_v2_d_tiling(100000, np.float32))
    self.assertEqual(
      set(executor.tiling) - {"total_num"},
      {
        "block_dim",
        "tiling_key",
        "tile_data_num",
        "small_core_data_num",
        "big_core_data_num",
        "final_small_tile_num",
        "final_big_tile_num",
        "small_tail_data_num",
        "big_tail_data_num",
        "tail_block_num",
      },
    )

  def test_failures(self):
    with self.assertRaisesRegex(ValueError, "0"):
      aclnn.threshold_grad_v2_d_tiling(0, np.float32)
    with self.assertRaisesRegex(ValueError, UNSUPPORTED.name):
      aclnn.threshold_grad_v2_d_tiling(10, UNSUPPORTED)
    with self.assertRaisesRegex(ValueError, "ub_size"):
      aclnn.threshold_grad_v2_d_tiling(10, np.float32, ub_size=1024)

  @hypothesis.settings(max_examples=300, deadline=None)
  @hypothesis.given(
    n=st.integers(1, 10**9),
    dtype=st.sampled_from(HOST_DTYPES),
    ub_size=st.integers(4096, 1 << 20),
    core_num=st.integers(1, 128),
    relu=st.booleans(),
  )
  def test_property_tiling(self, n, dtype, ub_size, core_num, relu):
    fn = aclnn.relu_grad_tiling if relu else aclnn.threshold_grad_v2_d_tiling
    size = np.dtype(dtype).itemsize
    try:
      t = fn(n, dtype, ub_size=ub_size, core_num=core_num)
    except ValueError:
      # Only a UB too small for one tile may fail.
      self.assertEqual((ub_size // 256) // dtype_lists.UB_DIVISORS[dtype.name], 0)
      return
    self.assertEqual(t["total_num"], n)
    self.assertTrue(1 <= t["block_dim"] <= core_num)
    self.assertLess(t["tail_block_num"], t["block_dim"])
    self.assertEqual(t["big_core_data_num"], t["small_core_data_num"] + 256 // size)
    big, small = t["tail_block_num"], t["block_dim"] - t["tail_block_num"]
    covered = big * t["big_core_data_num"] + small * t["small_core_data_num"]
    # The cores cover n exactly once the last one is clipped: less than a block of slack, and
    # the last core starts inside the tensor.
    self.assertGreaterEqual(covered, n)
    self.assertLess(covered - n, 256 // size)
    last = t["small_core_data_num"] if small else t["big_core_data_num"]
    self.assertLess(covered - last, n)
    for kind in ("small", "big"):
      count = t[f"{kind}_core_data_num"]
      tiles, tail = t[f"final_{kind}_tile_num"], t[f"{kind}_tail_data_num"]
      self.assertTrue(1 <= tail <= t["tile_data_num"])
      self.assertEqual((tiles - 1) * t["tile_data_num"] + tail, count)
    self.assertEqual(t["tile_data_num"] * size % 256, 0)
    if t["tile_data_num"] >= n:
      self.assertEqual(t["block_dim"], 1)


class NativePathsTest(absltest.TestCase):
  def test_paths(self):
    from jax_threshold import ffi

    self.assertTrue(ffi.get_include().endswith(os.path.join("jax_threshold", "include")))
    self.assertTrue(ffi.get_lib().endswith(os.path.join("jax_threshold", "lib")))

  @needs_native
  def test_installed_layout(self):
    from jax_threshold import ffi

    header = os.path.join(ffi.get_include(), "jax_threshold", "aclnn_threshold_backward.h")
    lib = os.path.join(ffi.get_lib(), "libjax_threshold_aclnn.so")
    if not os.path.exists(lib):
      self.skipTest("not an installed package (built in place): no jax_threshold/lib")
    self.assertTrue(os.path.exists(header), header)


if __name__ == "__main__":
  absltest.main()
