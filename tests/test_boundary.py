"""The custom-call boundary (docs/behaviour.md, "The custom-call boundary").

Custom calls to the project's targets that its lowering never emits — two results or none,
other operand counts, dtypes, shapes that do not broadcast to the result, a result that is not
row-major where the call is partitioned — are a clean error, never a process abort and never a
result computed on mismatched blocks: on one device and sharded over 4 CPU devices, jitted and
from a deserialized `jax.export` module, under Shardy and GSPMD. The calls run in child
processes (boundary_checks.py), since a regression would abort the process; a crashed child
fails the case it was running and the remaining cases run in a fresh one. The partitioner's
checks are also tested here directly, and so is where JAX's internals are used: by the "ffi"
registration only, and if they move, "ffi" is unavailable with the reason.
"""

import functools
import os
import sys

from absl.testing import absltest
from absl.testing import parameterized
import numpy as np

import jax_threshold as jt

HAS_FFI = "ffi" in jt.available_implementations()
SKIP_REASON = "the native extension with the XLA FFI handler is not built"
_TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _TESTS_DIR)
import boundary_checks  # noqa: E402  # pylint: disable=g-import-not-at-top
from child_process import run_child  # noqa: E402  # pylint: disable=g-import-not-at-top
import dtype_lists  # noqa: E402  # pylint: disable=g-import-not-at-top

PARTITIONERS = ("shardy", "gspmd")


def _child(cases, partitioner):
  args = list(cases) + (["--gspmd"] if partitioner == "gspmd" else [])
  script = os.path.join(_TESTS_DIR, "boundary_checks.py")
  return run_child([script, *args], devices=boundary_checks.DEVICES, timeout=900)


@functools.lru_cache(maxsize=None)
def outcomes(partitioner):
  """{(case, way): "ok ..." / "FAIL ..." / "crashed ..."} for every case, in as few children
  as crashes allow."""
  remaining = boundary_checks.case_names()
  result = {}
  while remaining:
    proc = _child(remaining, partitioner)
    started = None
    for line in proc.stdout.splitlines():
      kind, _, rest = line.partition(" ")
      key = tuple(rest.split(":", 1)[0].split("/", 1))
      if kind == "start":
        started = key
      elif kind in ("ok", "FAIL") and len(key) == 2:
        result[key] = line
        started = None
    done = {case for case, _ in result}
    if proc.returncode in (0, 1) or started is None:
      for case in remaining:
        for way in boundary_checks.ways(case):
          result.setdefault((case, way), f"missing (rc {proc.returncode}): {proc.stderr[-2000:]}")
      break
    result[started] = f"crashed (rc {proc.returncode}): {proc.stderr[-2000:]}"
    remaining = [c for c in remaining if c not in done and c != started[0]]
    for way in boundary_checks.ways(started[0]):  # the crashed case's later ways did not run
      result.setdefault((started[0], way), "not run: an earlier way crashed")
  return result


@absltest.skipUnless(HAS_FFI, SKIP_REASON)
class BoundaryCallTest(parameterized.TestCase):
  @parameterized.product(case=boundary_checks.case_names(), partitioner=PARTITIONERS)
  def test_clean_error_or_the_oracle(self, case, partitioner):
    got = outcomes(partitioner)
    for way in boundary_checks.ways(case):
      line = got[(case, way)]
      self.assertTrue(line.startswith("ok "), f"{case}/{way} under {partitioner}: {line}")
      self.assertIn("oracle's bits" if boundary_checks.gives_the_oracle(case) else "refused", line)


class _FakeShape:
  """Stands in for xla_client.Shape: aborts like XLA if dimensions() is asked of a tuple."""

  def __init__(self, dims=None, dtype=np.float32, tuple_of=None):
    self._dims, self._dtype, self._tuple = dims, np.dtype(dtype), tuple_of

  def is_tuple(self):
    return self._tuple is not None

  def is_array(self):
    return self._tuple is None

  def is_dynamic(self):
    return False

  def dimensions(self):
    if self._tuple is not None:
      raise AssertionError("dimensions() of a tuple shape (XLA would abort the process)")
    return self._dims

  def rank(self):
    return len(self._dims)

  def numpy_dtype(self):
    return self._dtype

  def layout(self):
    return None

  def __str__(self):
    return f"{self._dtype.name}{list(self._dims or [])}"


@absltest.skipUnless(HAS_FFI, SKIP_REASON)
class CheckCallTest(parameterized.TestCase):
  """partitioning.check_call: what the partitioner accepts before it computes anything."""

  def setUp(self):
    super().setUp()
    from jax_threshold import partitioning  # pylint: disable=g-import-not-at-top

    self.p = partitioning
    self.target = jt.ffi_targets()[0]

  def _check(self, args, result, target=None):
    return self.p.check_call(target or self.target, args, result)

  def test_the_lowerings_calls_pass(self):
    s = _FakeShape
    self.assertEqual(self._check([s((4, 8)), s((8,)), s(())], s((4, 8))), ((4, 8), (8,), ()))
    self._check([s((4, 8)), s((4, 8)), s((4, 1))], s((4, 8)))  # a vmapped threshold
    self._check([s((8,), np.int8), s((8,), np.int8), s((), np.float64)], s((8,), np.int8))
    # The legacy ReluGrad targets' call, under any of the names: the count comes from the call.
    self._check([s((4, 8)), s((8,))], s((4, 8)), "jax_threshold_threshold_backward_relu_grad_v1")
    self._check([s((4, 8)), s((8,))], s((4, 8)))

  @parameterized.named_parameters(
    ("tuple_result", [(8,), (8,), ()], "tuple", "one array result"),
    ("tuple_operand", ["tuple", (8,), ()], (8,), "operand 0 must be an array"),
    ("one_operand", [(8,)], (8,), r"takes \(grad_output, x, threshold\) operands; got 1"),
    ("four_operands", [(8,), (8,), (), ()], (8,), "got 4"),
    ("grad_3_for_x_4", [(3,), (4,), ()], (4,), "do not broadcast"),
    ("threshold_3_for_result_4", [(4,), (4,), (3,)], (4,), "threshold operand must be 0-d"),
    ("threshold_rank_below_result", [(4, 8), (4, 8), (8,)], (4, 8), "threshold operand"),
    ("result_not_the_broadcast", [(8,), (8,), ()], (2, 8), r"not the broadcast shape \[8\]"),
  )
  def test_refused(self, args, result, message):
    s = _FakeShape

    def make(d):
      return s(tuple_of=[s((8,)), s((8,))]) if d == "tuple" else s(d)

    with self.assertRaisesRegex(self.p.UnsupportedCallError, message):
      self._check([make(a) for a in args], make(result))

  @parameterized.named_parameters(
    ("result_dtype", [np.float32, np.float32, np.float32], np.int32, "not x's float32"),
    ("operand_dtypes", [np.int32, np.float32, np.float32], np.float32, "same dtype"),
    (
      "unsupported",
      [dtype_lists.UNSUPPORTED_INTEGER] * 2 + [np.float32],
      dtype_lists.UNSUPPORTED_INTEGER,
      f"unsupported dtype {dtype_lists.UNSUPPORTED_INTEGER.name}",
    ),
    (
      "threshold_dtype",
      [np.float32, np.float32, np.int32],
      np.float32,
      "must have dtype float32; got int32",
    ),
  )
  def test_dtypes_refused(self, dtypes, result_dtype, message):
    s = _FakeShape
    with self.assertRaisesRegex(self.p.UnsupportedCallError, message):
      self._check([s((8,), dtypes[0]), s((8,), dtypes[1]), s((), dtypes[2])], s((8,), result_dtype))

  def test_non_row_major_layout_refused(self):
    from jax._src.lib import xla_client as xc  # pylint: disable=g-import-not-at-top

    row = xc.Shape.array_shape(np.dtype(np.float32), (2, 3), (1, 0))
    column = xc.Shape.array_shape(np.dtype(np.float32), (2, 3), (0, 1))
    scalar = xc.Shape.array_shape(np.dtype(np.float32), ())
    self._check([row, row, scalar], row)
    with self.assertRaisesRegex(self.p.UnsupportedCallError, "not row-major"):
      self._check([row, column, scalar], row)

  def test_infer_declines_instead_of_raising(self):
    # GSPMD aborts on an exception from its propagation callbacks: they return None instead.
    s = _FakeShape
    tuple_result = s(tuple_of=[s((8,)), s((8,))])
    self.assertIsNone(
      self.p._infer_from_operands(  # pylint: disable=protected-access
        [s((8,)), s((8,)), s(())], [None, None, None], tuple_result, b"", target=self.target
      )
    )


# Every import of JAX's or jaxlib's internals by a jax_threshold module, while the package is
# imported and the reference lowering runs (jit, grad, vmap, the forward): JAX has imported its
# internals already, so the spy watches the import statements themselves.
_PRIVATE_IMPORTS = """
import builtins
real_import = builtins.__import__
importers = set()

def spy(name, globals=None, locals=None, fromlist=(), level=0):
  importer = (globals or {}).get("__name__") or ""
  private = name.startswith(("jax._src", "jaxlib")) or (name == "jax" and "_src" in (fromlist or ()))
  if importer.startswith("jax_threshold") and private:
    importers.add(importer)
  return real_import(name, globals, locals, fromlist, level)

builtins.__import__ = spy
import sys
import jax, jax.numpy as jnp
import jax_threshold as jt
g, x = jnp.ones(4), jnp.array([0.0, 0.5, 1.0, 2.0])
with jt.implementation("reference"):
  out = jax.jit(jt.threshold_backward)(g, x, 0.5)
  jax.grad(lambda x: jt.threshold(x, 0.5, 0.0).sum())(x)
  jax.vmap(lambda t: jt.threshold_backward(g, x, t))(jnp.array([0.0, 1.0]))
print(out.tolist())
print(sorted(importers))
print(sorted(m for m in sys.modules if m.startswith("jax_threshold")))
"""

# JAX without an internal the "ffi" registration needs, as if a release moved it.
_WITHOUT_AN_INTERNAL = """
import warnings
import jax._src.xla_bridge
del jax._src.xla_bridge.register_plugin_callbacks
with warnings.catch_warnings(record=True) as caught:
  warnings.simplefilter("always")
  import jax_threshold as jt
import jax.numpy as jnp
assert "ffi" not in jt.available_implementations(), jt.available_implementations()
assert any("JAX internals" in str(w.message) for w in caught), caught
print(jt.threshold_backward(jnp.ones(2), jnp.array([0.0, 1.0]), 0.5).tolist())
try:
  jt.threshold_backward(jnp.ones(2), jnp.ones(2), 0.5, implementation="ffi")
except ValueError as e:
  print(e)
"""


class JaxInternalsTest(absltest.TestCase):
  """JAX's internals are used by one module, which only the "ffi" registration imports."""

  def test_only_the_partitioning_module_imports_them(self):
    proc = run_child(["-c", _PRIVATE_IMPORTS], devices=1, timeout=300)
    self.assertEqual(proc.returncode, 0, proc.stderr)
    result, importers, modules = proc.stdout.splitlines()[-3:]
    self.assertEqual(result, "[0.0, 0.0, 1.0, 1.0]")
    registered = "jax_threshold.partitioning" in modules
    self.assertEqual(registered, HAS_FFI, modules)
    self.assertEqual(importers, str(["jax_threshold.partitioning"] if registered else []))

  @absltest.skipUnless(HAS_FFI, SKIP_REASON)
  def test_without_an_internal_only_ffi_is_unavailable_with_the_reason(self):
    proc = run_child(["-c", _WITHOUT_AN_INTERNAL], devices=boundary_checks.DEVICES, timeout=300)
    self.assertEqual(proc.returncode, 0, proc.stderr)
    lines = proc.stdout.splitlines()
    self.assertEqual(lines[0], "[0.0, 1.0]")
    self.assertIn("implementation 'ffi' is not available", lines[1])
    self.assertIn("needs JAX internals", lines[1])
    self.assertIn("register_plugin_callbacks", lines[1])


if __name__ == "__main__":
  absltest.main()
