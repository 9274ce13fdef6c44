"""Sharded arrays: the custom call partitions like the elementwise op it is.

The multi-device checks live in sharding_checks.py and run in child processes with 8 CPU
devices (XLA_FLAGS=--xla_force_host_platform_device_count=8 must be set before jax
starts): Auto and Explicit meshes, 1-D and 2-D, specs P('a'), P('a','b'), P(None,'b'),
P('a', None), broadcast operands, constant and traced thresholds, vmap over
sharded thresholds, grad through jt.threshold and of a broadcast operand. Each compares
the FFI custom call with the reference lowering: same output sharding, no collective the
reference lacks, bit-identical values. They run under Shardy (the default) and GSPMD,
then a module exported with shardings is called in a fresh process. The two-process
data-parallel example runs too. In-process tests cover the partitioner's sharding math.
"""

import os
import tempfile
import unittest

from absl.testing import absltest
from jax._src.lib import xla_client as xc
import numpy as np

from child_process import run_child
import jax_threshold as jt
import sharding_checks

HAS_FFI = "ffi" in jt.available_implementations()
SKIP_REASON = (
  "the native extension with the XLA FFI handler is not built (implementations: "
  f"{jt.available_implementations()}); pip install . to build it"
)
if HAS_FFI:
  from jax_threshold import ffi as jt_ffi
  from jax_threshold import partitioning

try:
  import flax  # noqa: F401  # pylint: disable=unused-import
  import optax  # noqa: F401  # pylint: disable=unused-import
  import sklearn  # noqa: F401  # pylint: disable=unused-import
  import matplotlib  # noqa: F401  # pylint: disable=unused-import
  import tqdm  # noqa: F401  # pylint: disable=unused-import

  HAVE_EXAMPLE_DEPS = True
except ImportError:
  HAVE_EXAMPLE_DEPS = False

_TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(_TESTS_DIR)
_CHECKS = os.path.join(_TESTS_DIR, "sharding_checks.py")
# Checks sharding_checks.py runs per mesh type (a guard against checks silently not running).
_MIN_CHECKS = {"Auto": 15, "Explicit": 15}


def _assert_checks_passed(test, proc, mesh_kinds):
  report = proc.stdout + "\n--- stderr ---\n" + proc.stderr[-5000:]
  test.assertEqual(proc.returncode, 0, report)
  test.assertIn("0 failed", proc.stdout, report)
  passed = [line[3:] for line in proc.stdout.splitlines() if line.startswith("ok ")]
  for kind in mesh_kinds:
    count = sum(name.startswith(kind + "/") for name in passed)
    test.assertGreaterEqual(count, _MIN_CHECKS.get(kind, 1), report)


@absltest.skipUnless(HAS_FFI, SKIP_REASON)
class ShardedChecksTest(absltest.TestCase):
  def test_shardy_and_export_round_trip_in_a_fresh_process(self):
    with tempfile.TemporaryDirectory() as tmp:
      module = os.path.join(tmp, "sharded.bin")
      proc = run_child([_CHECKS, "--export", module], devices=sharding_checks.DEVICES, timeout=300)
      _assert_checks_passed(self, proc, ("Auto", "Explicit"))
      self.assertTrue(os.path.exists(module))
      proc = run_child(
        [_CHECKS, "--call-exported", module], devices=sharding_checks.DEVICES, timeout=300
      )
      _assert_checks_passed(self, proc, ("export",))

  def test_gspmd(self):
    proc = run_child([_CHECKS, "--gspmd"], devices=sharding_checks.DEVICES, timeout=300)
    _assert_checks_passed(self, proc, ("Auto", "Explicit"))


@absltest.skipUnless(HAS_FFI, SKIP_REASON)
@unittest.skipIf(not HAVE_EXAMPLE_DEPS, "needs flax, optax, scikit-learn, tqdm, matplotlib")
class DataParallelExampleTest(absltest.TestCase):
  def test_two_processes_match_one(self):
    proc = run_child(
      [
        os.path.join(_ROOT, "examples", "data_parallel.py"),
        "--processes",
        "2",
        "--devices-per-process",
        "2",
        "--epochs",
        "3",
        "--timeout",
        "240",
      ],
      devices=1,
      timeout=420,
    )
    report = proc.stdout + "\n--- stderr ---\n" + proc.stderr[-5000:]
    self.assertEqual(proc.returncode, 0, report)
    self.assertIn("2 processes, 4 devices (2 per process)", proc.stdout, report)
    self.assertIn("epoch 3: loss", proc.stdout, report)
    # The activations' backward runs as the custom call on each device's rows: the only
    # collective of the training step is the gradient's all-reduce.
    self.assertIn(
      "training step: custom call True, collectives ['all-reduce']", proc.stdout, report
    )
    self.assertIn("params match", proc.stdout, report)


def _devices_by_tile(sharding, rank):
  """{tile index: set of devices} of a tiled HloSharding's first `rank` dims."""
  dims = sharding.tile_assignment_dimensions()
  grid = np.asarray(sharding.tile_assignment_devices()).reshape(dims)
  grid = grid.reshape(tuple(dims[:rank]) + (-1,))
  return {index: set(grid[index].tolist()) for index in np.ndindex(*dims[:rank])}


@absltest.skipUnless(HAS_FFI, SKIP_REASON)
class PartitionerShardingMathTest(absltest.TestCase):
  """The partitioner's rules on HloShardings, without devices."""

  def setUp(self):
    super().setUp()
    # devices=[2,4]: device d holds row tile d // 4 and column tile d % 4.
    self.result = xc.HloSharding.iota_tile([2, 4])

  def test_same_shape_operand_takes_the_result_sharding(self):
    s = partitioning.operand_sharding(self.result, (64, 128), (64, 128))
    self.assertEqual(_devices_by_tile(s, 2), _devices_by_tile(self.result, 2))

  def test_broadcast_operand_is_replicated_along_its_broadcast_dims(self):
    for shape in [(128,), (1, 128)]:
      s = partitioning.operand_sharding(self.result, shape, (64, 128))
      by_tile = _devices_by_tile(s, len(shape))
      # Column tile k is read by the devices of both row tiles.
      prefix = (0,) * (len(shape) - 1)
      expected = {prefix + (k,): {k, 4 + k} for k in range(4)}
      self.assertEqual(by_tile, expected, shape)

  def test_scalar_threshold_is_replicated(self):
    self.assertTrue(partitioning.operand_sharding(self.result, (), (64, 128)).is_replicated())

  def test_gspmd_inference_merges_operands_that_tile_different_dims(self):
    # A vmapped threshold (8, 1, 1) tiled on the batch dim; x (64, 128) tiled on columns.
    shape = lambda *dims: xc.Shape.array_shape(np.dtype(np.float32), dims)
    threshold = xc.HloSharding.iota_tile(
      [2, 1, 1, 4], subgroup_types=[xc.OpSharding.Type.REPLICATED]
    )
    x = xc.HloSharding.iota_tile(
      [1, 4, 2], [2, 4], [1, 0], subgroup_types=[xc.OpSharding.Type.REPLICATED]
    )
    merged = partitioning._infer_from_operands(  # pylint: disable=protected-access
      [shape(64, 128), shape(64, 128), shape(8, 1, 1)],
      [x, x, threshold],
      shape(8, 64, 128),
      b"{}",
      target=jt.ffi_targets()[0],
    )
    self.assertEqual(list(merged.tile_assignment_dimensions()), [2, 1, 4])
    by_tile = _devices_by_tile(merged, 3)
    self.assertEqual(by_tile[(1, 0, 2)], {6})

  def test_shardy_rule_gives_broadcast_dims_their_own_size_1_factor(self):
    from jax.interpreters import mlir  # pylint: disable=g-import-not-at-top

    with mlir.make_ir_context():
      rule = jt_ffi.sharding_rule([(128,), (64, 128), ()], (64, 128))
      self.assertEqual(
        str(rule), "#sdy.op_sharding_rule<([j], [i, j], [])->([i, j]) {i=64, j=128}, custom>"
      )
      rule = jt_ffi.sharding_rule([(1, 128), (64, 1)], (64, 128))
      self.assertEqual(
        str(rule),
        "#sdy.op_sharding_rule<([k, j], [i, l])->([i, j]) {i=64, j=128, k=1, l=1}, custom>",
      )


if __name__ == "__main__":
  absltest.main()
