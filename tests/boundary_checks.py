"""Custom calls to the project's targets that its lowering never emits (run by test_boundary.py).

    python tests/boundary_checks.py CASE [--gspmd]

with XLA_FLAGS=--xla_force_host_platform_device_count=4 (set by the parent). Each CASE is a
hand-written `jax.ffi.ffi_call` to the project's target (or a legacy one), with the lowering's
attribute relu_grad=False unless the case says otherwise, run four ways: jitted on one
device, jitted with its operands and result sharded over 4 devices, and both again from a
`jax.export` module that was serialized and deserialized. Every way must raise an exception
(never abort the process, never return a result), except the cases of `gives_the_oracle`, which
must give the oracle's bits. Prints "ok CASE/WAY" or "FAIL CASE/WAY: why" per way; exits 1 on a
failure.

The "layout-*" cases edit the exported module's layouts and run sharded only: on one device XLA
hands the handler the declared layout, which it reads row-major (unsupported,
docs/behaviour.md §7). Partitioned, the call is the partitioner's: it refuses a result that is
not row-major and replaces the call by a per-device call that declares row-major, so XLA lays
the operand blocks out for it.
"""

import dataclasses
import sys
import traceback

import jax
from jax import export
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P
import numpy as np

import jax_threshold as jt
import dtype_lists
import oracle

DEVICES = 4
TARGET = jt.ffi_targets()[0]
LEGACY_RELU_GRAD_TARGET = "jax_threshold_threshold_backward_relu_grad_v1"
F32 = jnp.float32


def _sds(shape, dtype=F32):
  return jax.ShapeDtypeStruct(shape, dtype)


# name -> (target, operands as (shape, dtype, spec), result(s), ffi_call kwargs, attributes
# besides relu_grad=False)
# Specs shard over the mesh axis "d" (4 devices); the result is constrained to `out_spec`.
_X = ((8,), np.float32, P("d"))
_T = ((), np.float32, P())
CASES = {
  "two-results": (TARGET, [_X, _X, _T], (_sds((8,)), _sds((8,))), {}, {}),
  "no-results": (TARGET, [_X, _X, _T], (), dict(has_side_effect=True), {}),
  "valid-tuple-of-one-result": (TARGET, [_X, _X, _T], (_sds((8,)),), {}, {}),
  "two-operands-without-relu-grad": (TARGET, [_X, _X], _sds((8,)), {}, {}),
  "relu-grad-not-a-bool": (TARGET, [_X, _X, _T], _sds((8,)), {}, dict(relu_grad=1)),
  "four-operands": (TARGET, [_X, _X, _T, _T], _sds((8,)), {}, {}),
  "result-dtype-differs": (TARGET, [_X, _X, _T], _sds((8,), jnp.int32), {}, {}),
  "operand-dtypes-differ": (TARGET, [((8,), np.int32, P("d")), _X, _T], _sds((8,)), {}, {}),
  "unsupported-dtype": (
    TARGET,
    [((8,), dtype_lists.UNSUPPORTED_INTEGER, P("d"))] * 2 + [_T],
    _sds((8,), dtype_lists.UNSUPPORTED_INTEGER),
    {},
    {},
  ),
  "threshold-dtype": (TARGET, [_X, _X, ((), np.int32, P())], _sds((8,)), {}, {}),
  "grad-3-for-x-4": (
    TARGET,
    [((3,), np.float32, P()), ((4,), np.float32, P("d")), _T],
    _sds((4,)),
    {},
    {},
  ),
  "threshold-3-for-result-4": (
    TARGET,
    [((4,), np.float32, P("d")), ((4,), np.float32, P("d")), ((3,), np.float32, P())],
    _sds((4,)),
    {},
    {},
  ),
  "threshold-rank-below-result": (
    TARGET,
    [((4, 8), np.float32, P(None, "d"))] * 2 + [((8,), np.float32, P("d"))],
    _sds((4, 8)),
    {},
    {},
  ),
  "result-larger-than-broadcast": (TARGET, [_X, _X, _T], _sds((4, 8)), {}, {}),
  "result-smaller-than-broadcast": (
    TARGET,
    [((2, 8), np.float32, P(None, "d"))] * 2 + [_T],
    _sds((8,)),
    {},
    {},
  ),
  "layout-operand-column-major": (
    TARGET,
    [((4, 8), np.float32, P(None, "d"))] * 2 + [_T],
    _sds((4, 8)),
    {},
    {},
  ),
  "layout-result-column-major": (
    TARGET,
    [((4, 8), np.float32, P(None, "d"))] * 2 + [_T],
    _sds((4, 8)),
    {},
    {},
  ),
  "valid-operand-target": (
    TARGET,
    [((4, 8), np.float32, P(None, "d")), ((8,), np.float32, P("d")), _T],
    _sds((4, 8)),
    {},
    {},
  ),
  "valid-relu-grad-ignores-the-threshold": (
    TARGET,
    [((4, 8), np.float32, P(None, "d")), ((8,), np.float32, P("d")), _T],
    _sds((4, 8)),
    {},
    dict(relu_grad=True),
  ),
  "valid-legacy-relu-grad-target": (
    LEGACY_RELU_GRAD_TARGET,
    [((4, 8), np.float32, P(None, "d")), ((8,), np.float32, P("d"))],
    _sds((4, 8)),
    {},
    None,
  ),
  "valid-batched-threshold": (
    TARGET,
    [((4, 8), np.float32, P("d")), ((4, 8), np.float32, P("d")), ((4, 1), np.float32, P("d"))],
    _sds((4, 8)),
    {},
    {},
  ),
}


WAYS = ("jit", "jit-sharded", "export", "export-sharded")
_LAYOUT_CASES = ("layout-operand-column-major", "layout-result-column-major")

_failures = []


def ways(name):
  return tuple(w for w in WAYS if "sharded" in w) if name in _LAYOUT_CASES else WAYS


def gives_the_oracle(name):
  return name.startswith("valid-") or name == "layout-operand-column-major"


def _operands(specs, mesh, sharded, rng):
  values = []
  for shape, dtype, spec in specs:
    v = (rng.standard_normal(shape) * 2).astype(dtype)
    values.append(jax.device_put(v, NamedSharding(mesh, spec)) if sharded else jnp.asarray(v))
  return values


def _constrained(fn, mesh, sharded):
  """fn's results as a list, the first one sharded along its last dim when `sharded`."""

  def f(*args):
    leaves = jax.tree.leaves(fn(*args))
    if sharded and leaves and leaves[0].ndim:
      spec = P(*([None] * (leaves[0].ndim - 1)), "d")
      leaves[0] = jax.lax.with_sharding_constraint(leaves[0], NamedSharding(mesh, spec))
    return leaves

  return f


def _attributes(name):
  attrs = CASES[name][4]
  return {} if attrs is None else {"relu_grad": False, **attrs}  # None: a legacy call's none


def _function(name, mesh, sharded):
  target, _, result, kwargs, _ = CASES[name]
  call = jax.ffi.ffi_call(target, result, **kwargs)
  return _constrained(lambda *args: call(*args, **_attributes(name)), mesh, sharded)


def _edit_layouts(exported, name):
  """The exported module with the custom call's first operand (or result) column-major."""
  from jax._src.export import _export  # pylint: disable=g-import-not-at-top  (no public API)
  from jax.interpreters import mlir  # pylint: disable=g-import-not-at-top

  text = exported.mlir_module()
  row, column = "dense<[1, 0]> : tensor<2xindex>", "dense<[0, 1]> : tensor<2xindex>"
  key = "operand_layouts = [" if "operand" in name else "result_layouts = ["
  at = text.index(key) + len(key)
  assert text.startswith(row, at), text[at : at + 80]
  text = text[:at] + column + text[at + len(row) :]
  with mlir.make_ir_context():
    module = mlir.ir.Module.parse(text)
    serialized = _export._module_to_bytecode(module)  # pylint: disable=protected-access
  return dataclasses.replace(exported, mlir_module_serialized=serialized)


def _expected(name, args):
  g, x, *t = [np.asarray(a) for a in args]
  relu_grad = _attributes(name).get("relu_grad", not t)  # a legacy call without t is ReluGrad
  t = np.float32(0) if relu_grad else t[0]
  out = oracle.threshold_backward(g, x, t) if t.ndim == 0 else np.where(x > t, g, 0)  # exact
  return np.asarray(out, np.float32)


def run(name, way):
  mesh = jax.make_mesh((DEVICES,), ("d",), axis_types=(jax.sharding.AxisType.Auto,))
  sharded = "sharded" in way
  rng = np.random.default_rng(25)
  args = _operands(CASES[name][1], mesh, sharded, rng)
  fn = jax.jit(_function(name, mesh, sharded))
  layout = name.startswith("layout-")
  if "export" in way or layout:
    # Exported without shardings (JAX calls a module exported with shardings only under the
    # partitioner it was exported with), then called inside a sharded jit.
    specs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in args]
    exported = export.export(
      jax.jit(_function(name, mesh, False)),
      disabled_checks=[export.DisabledSafetyCheck.custom_call(CASES[name][0])],
    )(*specs)
    if layout:
      exported = _edit_layouts(exported, name)
    exported = export.deserialize(exported.serialize())
    fn = jax.jit(_constrained(exported.call, mesh, sharded))
  try:
    out = jax.block_until_ready(fn(*args))
  except Exception as e:  # pylint: disable=broad-except  (any clean error is the answer)
    if gives_the_oracle(name):
      raise AssertionError(f"a valid call failed: {e}") from e
    return f"refused: {type(e).__name__}: {str(e).splitlines()[0][:200]}"
  if not gives_the_oracle(name):
    raise AssertionError(f"computed a result: {[np.asarray(o).tolist() for o in out]}")
  got = np.asarray(out[0])
  want = _expected(name, args)
  assert got.tobytes() == want.tobytes(), f"{got} != {want}"
  return "oracle's bits"


def case_names():
  return list(CASES)


def main(argv):
  if "--gspmd" in argv:
    jax.config.update("jax_use_shardy_partitioner", False)
  names = [a for a in argv if not a.startswith("--")]
  for name in names:
    for way in ways(name):
      print(f"start {name}/{way}", flush=True)
      try:
        print(f"ok {name}/{way}: {run(name, way)}", flush=True)
      except Exception:  # pylint: disable=broad-except  (report every way)
        _failures.append(f"{name}/{way}")
        print(f"FAIL {name}/{way}: {traceback.format_exc()}", flush=True)
  return 1 if _failures else 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
