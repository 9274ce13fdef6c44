"""The native dtype and SoC table (ascend_kernels/include/ascend_kernels/dtype_soc_table.h, as
jax_threshold._aclnn_ext exports it) agrees with the Python contract table (jax_threshold._dtypes)
and is what jax_threshold.aclnn uses."""

from absl.testing import absltest
import jax.numpy as jnp
import numpy as np

from jax_threshold import _dtypes

try:
  from jax_threshold import _aclnn_ext  # type: ignore[attr-defined]
  from jax_threshold import aclnn

  _SKIP_REASON = None
except ImportError as e:  # a source tree without the compiled extension
  _aclnn_ext = aclnn = None
  _SKIP_REASON = f"the compiled extension is not importable: {e}"


def _name(dtype) -> str:
  return np.dtype(dtype).name


class NativeTablesTest(absltest.TestCase):
  def setUp(self):
    super().setUp()
    if _SKIP_REASON:
      self.skipTest(_SKIP_REASON)

  def test_kernel_dtypes_are_the_supported_dtypes(self):
    self.assertCountEqual(_aclnn_ext.KERNEL_DTYPES, [d.name for d in _dtypes.SUPPORTED_DTYPES])

  def test_threshold_dtypes_agree_with_the_contract(self):
    for x in _dtypes.SUPPORTED_DTYPES:
      with self.subTest(x=x.name):
        self.assertEqual(
          _aclnn_ext.THRESHOLD_DTYPES[x.name],
          tuple(d.name for d in _dtypes.threshold_operand_dtypes(x)),
        )

  def test_narrow_floats_take_a_float32_threshold(self):
    narrow = [x for x, ts in _aclnn_ext.THRESHOLD_DTYPES.items() if ts == ("float32",)]
    self.assertCountEqual(narrow, [d.name for d in _dtypes.NARROW_FLOAT_DTYPES])

  def test_item_sizes_are_numpys(self):
    for name, (_, itemsize) in _aclnn_ext.DTYPES.items():
      with self.subTest(dtype=name):
        dtype = jnp.bfloat16 if name == "bfloat16" else name
        self.assertEqual(itemsize, np.dtype(dtype).itemsize)

  def test_codes_are_unique_and_kernel_codes_are_dtype_codes(self):
    codes = [code for code, _ in _aclnn_ext.DTYPES.values()]
    self.assertLen(set(codes), len(codes))
    self.assertNotIn(_aclnn_ext.ACL_DT_UNDEFINED, codes)
    for name, code in _aclnn_ext.KERNEL_DTYPES.items():
      self.assertEqual(_aclnn_ext.DTYPES[name][0], code)

  def test_aclnn_reads_the_native_table(self):
    self.assertEqual(aclnn.SOCS, _aclnn_ext.SOCS)
    self.assertEqual(aclnn.DEFAULT_UB_SIZE, _aclnn_ext.SOC_UB_SIZE[_aclnn_ext.DEFAULT_SOC])
    self.assertEqual(aclnn.DEFAULT_CORE_NUM, _aclnn_ext.SOC_CORE_NUM[_aclnn_ext.DEFAULT_SOC])
    self.assertEqual(aclnn.SOCS[_aclnn_ext.DEFAULT_SOC], 1)  # Ascend910B
    self.assertEqual(aclnn.HOST_CORE_NUM, _aclnn_ext.SOC_CORE_NUM["host"])
    for dtype in _dtypes.SUPPORTED_DTYPES:
      self.assertEqual(aclnn.acl_dtype(dtype), _aclnn_ext.KERNEL_DTYPES[dtype.name])
    self.assertEqual(aclnn.acl_dtype(np.complex64), _aclnn_ext.DTYPES["complex64"][0])

  def test_integer_dtypes_are_the_contracts_with_numpys_ranges(self):
    integers = [d for d in _dtypes.SUPPORTED_DTYPES if _dtypes.is_integer(d)]
    self.assertCountEqual(_aclnn_ext.INTEGER_RANGES, [d.name for d in integers])
    for d in integers:
      info = np.iinfo(d)
      self.assertEqual(_aclnn_ext.INTEGER_RANGES[d.name], (info.min, info.max), d.name)

  def test_aclnn_hands_over_thresholds_by_the_tables_kinds(self):
    # A dtype missing from these maps would take another kind's threshold form: wrong results.
    self.assertEqual(
      {code: d.name for code, d in aclnn._INTEGER_DTYPES.items()},
      {_aclnn_ext.KERNEL_DTYPES[n]: n for n in _aclnn_ext.INTEGER_RANGES},
    )
    narrow = [x for x, ts in _aclnn_ext.THRESHOLD_DTYPES.items() if ts == ("float32",)]
    self.assertEqual(aclnn._NARROW_FLOAT_CODES, {_aclnn_ext.KERNEL_DTYPES[n] for n in narrow})

  def test_soc_dtypes_are_kernel_dtypes_and_the_host_takes_the_contracts(self):
    for table in (_aclnn_ext.SOC_DTYPES, _aclnn_ext.SOC_ZERO_THRESHOLD_DTYPES):
      self.assertCountEqual(table, _aclnn_ext.SOCS)
      for soc, names in table.items():
        self.assertContainsSubset(names, _aclnn_ext.KERNEL_DTYPES, soc)
    for soc, names in _aclnn_ext.SOC_DTYPES.items():
      self.assertContainsSubset(names, _aclnn_ext.SOC_ZERO_THRESHOLD_DTYPES[soc], soc)
    host = [d.name for d in _dtypes.SUPPORTED_DTYPES]
    self.assertCountEqual(_aclnn_ext.SOC_DTYPES["host"], host)

  def test_every_soc_has_a_ub_size_and_core_count(self):
    self.assertCountEqual(_aclnn_ext.SOC_UB_SIZE, _aclnn_ext.SOCS)
    self.assertCountEqual(_aclnn_ext.SOC_CORE_NUM, _aclnn_ext.SOCS)
    self.assertEqual(_aclnn_ext.SOC_UB_SIZE["host"], 0)
    self.assertEqual(_aclnn_ext.SOC_UB_SIZE["Ascend910B"], 192 * 1024)


if __name__ == "__main__":
  absltest.main()
