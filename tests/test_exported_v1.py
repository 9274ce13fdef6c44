"""Modules exported by jax-threshold 0.1.0 keep running, bit for bit as the reference lowering.

tests/data/exported_by_jax_<version>/*.jax_exported are `jax.export`s of jitted "ffi" calls
lowered to the 0.1.0 targets (the `_v1` names; `CASES` says how each was made: shapes, dtypes,
thresholds), serialized by that jax. Each is deserialized and run here, where the lowering emits
another target; it runs only while its `_v1` names stay registered. A jax reads the StableHLO of
its own and older versions only, so each set runs on a jax at least as new as the one that made
it. The sharded one needs 8 host devices: it runs in a child process.
"""

import os
import re

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax import export
import jax.numpy as jnp
import ml_dtypes
import numpy as np

from child_process import run_child
import jax_threshold as jt
import oracle

HAS_FFI = "ffi" in jt.available_implementations()
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
SETS = sorted(d for d in os.listdir(DATA) if d.startswith("exported_by_jax_"))
F32 = np.float32


def _release(version):
  return tuple(int(p) for p in re.findall(r"\d+", version))


def _skip_unless_readable(test, exported_set):
  made_by = exported_set.removeprefix("exported_by_jax_")
  if _release(jax.__version__) < _release(made_by):
    test.skipTest(f"jax {jax.__version__} cannot read StableHLO serialized by jax {made_by}")


# name -> (the _v1 target it calls, its operands' (shape, dtype), the function it exported given
# an implementation).
CASES = {
  "operand_pooled": (
    "jax_threshold_threshold_backward_v1",
    [((256, 128), F32), ((256, 128), F32), ((), F32)],
    lambda impl: lambda g, x, t: jt.threshold_backward(g, x, t, implementation=impl),
  ),
  "operand_inline": (
    "jax_threshold_threshold_backward_inline_v1",
    [((3, 5), ml_dtypes.bfloat16)] * 2,
    lambda impl: lambda g, x: jt.threshold_backward(g, x, 0.25, implementation=impl),
  ),
  "relu_grad_pooled": (
    "jax_threshold_threshold_backward_relu_grad_v1",
    [((1, 40000), F32), ((3, 40000), F32)],
    lambda impl: lambda g, x: jt.threshold_backward(g, x, 0.0, implementation=impl),
  ),
  "relu_grad_inline": (
    "jax_threshold_threshold_backward_relu_grad_inline_v1",
    [((7,), np.int8)] * 2,
    lambda impl: lambda g, x: jt.threshold_backward(g, x, 0, implementation=impl),
  ),
  "vmapped_threshold": (
    "jax_threshold_threshold_backward_inline_v1",
    [((4, 6), F32), ((4, 6), F32), ((5,), F32)],
    lambda impl: jax.vmap(
      lambda g, x, t: jt.threshold_backward(g, x, t, implementation=impl), in_axes=(None, None, 0)
    ),
  ),
}


def _load(exported_set, name):
  with open(os.path.join(DATA, exported_set, f"{name}.jax_exported"), "rb") as f:
    return export.deserialize(bytearray(f.read()))


def _values(rng, shape, dtype):
  """Values around 0 (the thresholds' neighbourhood), with zeros, signed zeros and NaNs."""
  if np.issubdtype(dtype, np.integer):
    return rng.integers(-3, 4, shape).astype(dtype)
  v = rng.choice(np.array([-1.0, -0.25, -0.0, 0.0, 0.25, 0.5, 1e-40, np.nan]), shape)
  return np.where(rng.random(shape) < 0.5, v, rng.standard_normal(shape)).astype(dtype)


@absltest.skipUnless(HAS_FFI, "the native extension with the XLA FFI handler is not built")
class ExportedV1Test(parameterized.TestCase):
  @parameterized.named_parameters((f"{s}_{n}", s, n) for s in SETS for n in CASES)
  def test_runs_with_the_reference_bits(self, exported_set, name):
    _skip_unless_readable(self, exported_set)
    target, operands, fn = CASES[name]
    exported = _load(exported_set, name)
    self.assertIn(f"@{target}(", exported.mlir_module())
    rng = np.random.default_rng(len(name))
    args = [_values(rng, shape, dtype) for shape, dtype in operands]
    got = jax.jit(exported.call)(*args)
    want = jax.jit(fn("reference"))(*args)
    np.testing.assert_array_equal(oracle.bits(got), oracle.bits(want))

  @parameterized.named_parameters((s, s) for s in SETS)
  def test_sharded_over_8_devices_partitions_without_gathering(self, exported_set):
    _skip_unless_readable(self, exported_set)
    proc = run_child(
      ["-c", _SHARDED_CHILD, os.path.join(DATA, exported_set)], devices=8, timeout=300
    )
    self.assertEqual(proc.returncode, 0, proc.stderr[-3000:])
    self.assertEqual(proc.stdout.split()[-1], "ok")


# make_v1_sharded: a (64, 1024) float32 grad_output and x sharded over 8 devices along dim 0,
# a 0-d threshold; the operand target with it and the ReluGrad target (threshold 0), both results
# sharded the same way.
_SHARDED_CHILD = """
import os, sys
import jax, jax.numpy as jnp, numpy as np
from jax import export
from jax.sharding import NamedSharding, PartitionSpec as P
import jax_threshold as jt
import oracle

with open(os.path.join(sys.argv[1], "sharded_8_devices.jax_exported"), "rb") as f:
  exported = export.deserialize(bytearray(f.read()))
module = exported.mlir_module()
assert "@jax_threshold_threshold_backward_v1(" in module
assert "@jax_threshold_threshold_backward_relu_grad_v1(" in module
mesh = jax.make_mesh((8,), ("a",), axis_types=(jax.sharding.AxisType.Auto,))
s = NamedSharding(mesh, P("a"))
rng = np.random.default_rng(8)
g, x = (jax.device_put(rng.standard_normal((64, 1024)).astype(np.float32), s) for _ in range(2))
t = np.float32(0.25)
call = jax.jit(exported.call)
compiled = call.lower(g, x, t).compile().as_text()
assert "all-gather" not in compiled, "a custom call was gathered instead of partitioned"
got = call(g, x, t)
want = jax.jit(lambda g, x, t: (jt.threshold_backward(g, x, t, implementation="reference"),
                                jt.threshold_backward(g, x, 0.0, implementation="reference")))(g, x, t)
for a, b in zip(got, want):
  assert a.sharding.spec == P("a"), a.sharding
  assert (oracle.bits(np.asarray(a)) == oracle.bits(np.asarray(b))).all()
print("ok")
"""


@absltest.skipUnless(HAS_FFI, "the native extension with the XLA FFI handler is not built")
class LegacyNamesTest(absltest.TestCase):
  def test_every_v1_name_stays_registered_on_cpu(self):
    from jax_threshold import _native  # pylint: disable=g-import-not-at-top

    cpu = {name for name, platform, _ in _native.ffi_handlers() if platform == "cpu"}
    for name in (
      "jax_threshold_threshold_backward_v1",
      "jax_threshold_threshold_backward_relu_grad_v1",
      "jax_threshold_threshold_backward_inline_v1",
      "jax_threshold_threshold_backward_relu_grad_inline_v1",
    ):
      self.assertIn(name, cpu)

  def test_a_legacy_relu_grad_call_of_more_than_8_dims(self):
    # ReluGrad's phase one takes at most 8 dims: the handler merges the call's dims first.
    rng = np.random.default_rng(9)
    g = _values(rng, (2, 1, 3, 1, 2, 2, 1, 2, 2, 3), F32)
    x = _values(rng, (1, 1, 3, 1, 2, 2, 1, 2, 2, 3), F32)
    call = jax.ffi.ffi_call(
      "jax_threshold_threshold_backward_relu_grad_v1", jax.ShapeDtypeStruct(g.shape, F32)
    )
    got = jax.jit(call)(g, x)
    want = jt.threshold_backward(g, x, 0.0, implementation="reference")
    np.testing.assert_array_equal(oracle.bits(got), oracle.bits(jnp.asarray(want)))


if __name__ == "__main__":
  absltest.main()
