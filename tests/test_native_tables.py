"""The native dtype and SoC table (ascend_kernels/include/ascend_kernels/dtype_soc_table.h, as
jax_threshold._native exports it) agrees with the Python contract table (jax_threshold._dtypes),
is what jax_threshold.aclnn uses, and every row of it runs in the sweeps that claim every row."""

import re

from absl.testing import absltest
import numpy as np

import dtype_lists
from jax_threshold import _dtypes

try:
  from jax_threshold import _native  # type: ignore[attr-defined]
  from jax_threshold import aclnn

  _SKIP_REASON = None
except ImportError as e:  # a source tree without the compiled extension
  _native = aclnn = None
  _SKIP_REASON = f"the compiled extension is not importable: {e}"


def _name(dtype) -> str:
  return np.dtype(dtype).name


class NativeTablesTest(absltest.TestCase):
  def setUp(self):
    super().setUp()
    if _SKIP_REASON:
      self.skipTest(_SKIP_REASON)

  def test_kernel_dtypes_are_the_supported_dtypes(self):
    self.assertCountEqual(_native.KERNEL_DTYPES, [d.name for d in _dtypes.SUPPORTED_DTYPES])

  def test_threshold_dtypes_agree_with_the_contract(self):
    for x in _dtypes.SUPPORTED_DTYPES:
      with self.subTest(x=x.name):
        self.assertEqual(
          _native.THRESHOLD_DTYPES[x.name],
          tuple(d.name for d in _dtypes.threshold_operand_dtypes(x)),
        )

  def test_narrow_floats_take_a_float32_threshold(self):
    narrow = [x for x, ts in _native.THRESHOLD_DTYPES.items() if ts == ("float32",)]
    self.assertCountEqual(narrow, [d.name for d in _dtypes.NARROW_FLOAT_DTYPES])

  def test_item_sizes_are_numpys(self):
    for name, (_, itemsize) in _native.DTYPES.items():
      with self.subTest(dtype=name):
        self.assertEqual(itemsize, dtype_lists.by_name(name).itemsize)

  def test_codes_are_unique_and_kernel_codes_are_dtype_codes(self):
    codes = [code for code, _ in _native.DTYPES.values()]
    self.assertLen(set(codes), len(codes))
    self.assertNotIn(_native.ACL_DT_UNDEFINED, codes)
    for name, code in _native.KERNEL_DTYPES.items():
      self.assertEqual(_native.DTYPES[name][0], code)

  def test_aclnn_reads_the_native_table(self):
    self.assertEqual(aclnn.SOCS, _native.SOCS)
    self.assertEqual(aclnn.DEFAULT_SOC, _native.DEFAULT_SOC)
    self.assertEqual(aclnn.DEFAULT_UB_SIZE, _native.SOC_UB_SIZE[_native.DEFAULT_SOC])
    self.assertEqual(aclnn.DEFAULT_CORE_NUM, _native.SOC_CORE_NUM[_native.DEFAULT_SOC])
    self.assertEqual(aclnn.SOCS[_native.DEFAULT_SOC], 1)  # Ascend910B
    self.assertEqual(aclnn.HOST_CORE_NUM, _native.SOC_CORE_NUM["host"])
    for dtype in _dtypes.SUPPORTED_DTYPES:
      self.assertEqual(aclnn.acl_dtype(dtype), _native.KERNEL_DTYPES[dtype.name])
    self.assertEqual(aclnn.acl_dtype(np.complex64), _native.DTYPES["complex64"][0])

  def test_integer_dtypes_are_the_contracts_with_numpys_ranges(self):
    integers = [d for d in _dtypes.SUPPORTED_DTYPES if _dtypes.is_integer(d)]
    self.assertCountEqual(_native.INTEGER_RANGES, [d.name for d in integers])
    for d in integers:
      info = np.iinfo(d)
      self.assertEqual(_native.INTEGER_RANGES[d.name], (info.min, info.max), d.name)

  def test_aclnn_hands_over_thresholds_by_the_tables_kinds(self):
    # A dtype missing from these maps would take another kind's threshold form: wrong results.
    self.assertEqual(
      {code: d.name for code, d in aclnn._INTEGER_DTYPES.items()},
      {_native.KERNEL_DTYPES[n]: n for n in _native.INTEGER_RANGES},
    )
    narrow = [x for x, ts in _native.THRESHOLD_DTYPES.items() if ts == ("float32",)]
    self.assertEqual(aclnn._NARROW_FLOAT_CODES, {_native.KERNEL_DTYPES[n] for n in narrow})

  def test_soc_dtypes_are_kernel_dtypes_and_the_host_takes_the_contracts(self):
    for table in (_native.SOC_DTYPES, _native.SOC_ZERO_THRESHOLD_DTYPES):
      self.assertCountEqual(table, _native.SOCS)
      for soc, names in table.items():
        self.assertContainsSubset(names, _native.KERNEL_DTYPES, soc)
    for soc, names in _native.SOC_DTYPES.items():
      self.assertContainsSubset(names, _native.SOC_ZERO_THRESHOLD_DTYPES[soc], soc)
    host = [d.name for d in _dtypes.SUPPORTED_DTYPES]
    self.assertCountEqual(_native.SOC_DTYPES["host"], host)

  def test_every_soc_has_a_ub_size_and_core_count(self):
    self.assertCountEqual(_native.SOC_UB_SIZE, _native.SOCS)
    self.assertCountEqual(_native.SOC_CORE_NUM, _native.SOCS)
    self.assertEqual(_native.SOC_UB_SIZE["host"], 0)
    self.assertEqual(_native.SOC_UB_SIZE["Ascend910B"], 192 * 1024)


def _rows_swept(test_class, test) -> set[str]:
  """The rows a `dtype_lists.by_row` sweep runs, from its cases' names: `test_x_<row>_<i>`."""
  prefix = test + "_"
  names = [n for n in dir(test_class) if n.startswith(prefix)]
  return {re.sub(r"_\d+$", "", n[len(prefix) :]) for n in names}


class RowCoverageTest(absltest.TestCase):
  """The sweeps that claim every SoC or every dtype run every row of the table: a list written
  by hand, or one that leaves a row out, fails here; so does a row no sweep runs."""

  def setUp(self):
    super().setUp()
    if _SKIP_REASON:
      self.skipTest(_SKIP_REASON)

  def test_a_row_whose_name_ends_in_digits_is_read_whole(self):
    class Sweep:
      pass

    for case in dtype_lists.by_row(soc=["Ascend910_93", "host"]):
      setattr(Sweep, "test_x" + case["testcase_name"], None)
    self.assertEqual(_rows_swept(Sweep, "test_x"), {"Ascend910_93", "host"})

  def test_sweeps_run_every_row(self):
    import test_aclnn  # pylint: disable=g-import-not-at-top
    import test_eager_calls
    import test_ffi_shapes
    import test_workspace

    socs = set(_native.SOCS)
    kernel_socs = {s for s in socs if _native.SOC_ZERO_THRESHOLD_DTYPES[s]}
    dtypes = {d.name for d in _dtypes.SUPPORTED_DTYPES}
    self.assertEqual(dtypes, set(_native.KERNEL_DTYPES))
    status_codes = test_aclnn.StatusCodeTest
    values = test_aclnn.ValuesTest
    tiling = test_aclnn.TilingTest
    workspace = test_workspace.BroadcastWorkspaceTest
    soc_sweeps = {
      (status_codes, "test_soc_dtype_lists"): socs,
      (status_codes, "test_ub_size_beyond_the_soc_is_invalid"): kernel_socs,
      (status_codes, "test_each_soc_plans_for_its_own_platform_by_default"): kernel_socs,
      (status_codes, "test_platform_params_refused"): kernel_socs,
      (values, "test_socs_and_core_counts"): kernel_socs,
      (values, "test_every_listed_dtype_runs_under_its_soc"): kernel_socs,
      (tiling, "test_default_platform_is_the_socs"): kernel_socs,
      (workspace, "test_contiguous_broadcast_inputs_need_no_workspace"): {
        s for s in socs if "float32" in _native.SOC_DTYPES[s]
      },
    }
    dtype_sweeps = {
      (values, "test_every_dtype"): dtypes,
      (values, "test_broadcast_and_scalars"): dtypes,
      (values, "test_strided_views_and_untouched_memory"): dtypes,
      (values, "test_partial_overlap_copy_semantics"): dtypes,
      (tiling, "test_tile_data_num"): dtypes,
      (test_eager_calls.PythonNumberThresholdTest, "test_floats"): dtypes,
      (test_eager_calls.PythonNumberThresholdTest, "test_ints"): dtypes,
      (test_ffi_shapes.PerElementThresholdBatchTest, "test_bits_match_the_oracle"): dtypes,
    }
    for kind, rows, sweeps in (("soc", socs, soc_sweeps), ("dtype", dtypes, dtype_sweeps)):
      swept = set()
      for (test_class, test), claimed in sweeps.items():
        with self.subTest(test=f"{test_class.__name__}.{test}"):
          self.assertEqual(_rows_swept(test_class, test), claimed)
        swept |= _rows_swept(test_class, test)
      with self.subTest(rows=kind):
        self.assertEqual(swept, rows, "rows no sweep runs")

  def test_every_kernel_dtype_has_its_ub_divisor(self):
    self.assertCountEqual(dtype_lists.UB_DIVISORS, _native.KERNEL_DTYPES)


if __name__ == "__main__":
  absltest.main()
