"""Multi-device checks of threshold_backward on sharded arrays (run by test_sharding.py).

The device count must be set before jax starts, so test_sharding.py runs this file in a
child process with XLA_FLAGS=--xla_force_host_platform_device_count=8:

    python tests/sharding_checks.py [--gspmd] [--export PATH] [--call-exported PATH]

Every check runs a function through the reference lowering and through the FFI custom
call and requires: the same output sharding (and, on Explicit meshes, the same sharding
in the output's type), no collective in the FFI program's compiled HLO that the
reference's lacks, the custom call present, and bit-identical values. Prints
"ok <check>" or "FAIL <check>: <why>" per check and exits 1 if any failed.

--gspmd runs everything with jax_use_shardy_partitioner=False (GSPMD); --export PATH
also writes a sharded jax.export module, and --call-exported PATH (in a fresh process)
only calls such a module and checks it.
"""

import argparse
import functools
import re
import sys
import traceback

import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P
import numpy as np

import jax_threshold as jt

DEVICES = 8
COLLECTIVES = ("all-gather", "all-to-all", "collective-permute", "all-reduce")
_COLLECTIVE_RE = re.compile(r"\s(" + "|".join(COLLECTIVES) + r")(?:-start)?\(")
TARGET_PREFIX = "jax_threshold_threshold_backward"

_failures = []


def collectives(hlo_text) -> set:
  """The kinds of collective ops in a compiled HLO text."""
  return set(_COLLECTIVE_RE.findall(hlo_text))


def check(name):
  """Runs the decorated check now, recording "ok" or the failure."""

  def run(fn):
    try:
      fn()
      print(f"ok {name}", flush=True)
    except Exception:  # pylint: disable=broad-except  (report every check)
      _failures.append(name)
      print(f"FAIL {name}: {traceback.format_exc()}", flush=True)
    return fn

  return run


def _put(mesh, rng, shape, spec, dtype=np.float32):
  value = (rng.standard_normal(shape) * 2).astype(dtype)
  return jax.device_put(value, NamedSharding(mesh, spec))


def compare(fn, *args, expect_custom_call=True):
  """fn(implementation, *args) through both lowerings: shardings, collectives, bits."""
  results = {}
  for impl in ("reference", "ffi"):
    jitted = jax.jit(functools.partial(fn, impl))
    hlo = jitted.lower(*args).compile().as_text()
    out = jitted(*args)
    results[impl] = (out, hlo)
  (ref, ref_hlo), (ffi, ffi_hlo) = results["reference"], results["ffi"]
  assert (TARGET_PREFIX in ffi_hlo) == expect_custom_call, "custom call missing from the FFI HLO"
  assert TARGET_PREFIX not in ref_hlo
  for r, f in zip(jax.tree.leaves(ref), jax.tree.leaves(ffi)):
    assert f.sharding.is_equivalent_to(r.sharding, r.ndim), (f.sharding, r.sharding)
    assert jax.typeof(f).sharding == jax.typeof(r).sharding, (jax.typeof(f), jax.typeof(r))
    assert np.asarray(f).tobytes() == np.asarray(r).tobytes(), "values differ"
  extra = collectives(ffi_hlo) - collectives(ref_hlo)
  assert not extra, f"collectives only in the FFI program: {sorted(extra)}"
  return ffi


def _tb(threshold):
  """(impl, g, x[, t]) -> threshold_backward with a static or a traced threshold."""
  if threshold == "traced":
    return lambda impl, g, x, t: jt.threshold_backward(g, x, t, implementation=impl)
  return lambda impl, g, x: jt.threshold_backward(g, x, threshold, implementation=impl)


def _mesh_context(mesh):
  if mesh.axis_types[0] == AxisType.Explicit:
    return jax.sharding.set_mesh(mesh)
  return _NullContext()


class _NullContext:
  def __enter__(self):
    return self

  def __exit__(self, *exc):
    return False


def run_mesh_checks(axis_type):
  kind = axis_type.name
  rng = np.random.default_rng(0)
  mesh1 = jax.make_mesh((DEVICES,), ("a",), axis_types=(axis_type,))
  mesh2 = jax.make_mesh((2, DEVICES // 2), ("a", "b"), axis_types=(axis_type,) * 2)
  t = jnp.float32(0.25)

  # (mesh, g shape, g spec, x shape, x spec, threshold)
  cases = [
    ("1d-a", mesh1, (64, 128), P("a"), (64, 128), P("a"), 0.25),
    ("1d-broadcast-g", mesh1, (128,), P(), (64, 128), P("a"), "traced"),
    ("2d-ab", mesh2, (64, 128), P("a", "b"), (64, 128), P("a", "b"), 0.25),
    ("2d-ab-traced", mesh2, (64, 128), P("a", "b"), (64, 128), P("a", "b"), "traced"),
    ("2d-None-b", mesh2, (64, 128), P(None, "b"), (64, 128), P(None, "b"), "traced"),
    ("2d-a-None", mesh2, (64, 128), P("a", None), (64, 128), P("a", None), 0.25),
    ("2d-broadcast-g-rank1", mesh2, (128,), P(), (64, 128), P("a", "b"), 0.25),
    ("2d-broadcast-g-rank1-traced", mesh2, (128,), P(), (64, 128), P("a", "b"), "traced"),
    ("2d-broadcast-g-row", mesh2, (1, 128), P(None, "b"), (64, 128), P("a", "b"), "traced"),
    ("2d-broadcast-x", mesh2, (64, 128), P("a", "b"), (128,), P("b"), "traced"),
  ]
  for name, mesh, g_shape, g_spec, x_shape, x_spec, threshold in cases:

    @check(f"{kind}/{name}")
    def _():
      with _mesh_context(mesh):
        g = _put(mesh, rng, g_shape, g_spec)
        x = _put(mesh, rng, x_shape, x_spec)
        args = (g, x, t) if threshold == "traced" else (g, x)
        compare(_tb(threshold), *args)

  @check(f"{kind}/vmap-sharded-thresholds")
  def _():
    with _mesh_context(mesh2):
      g = _put(mesh2, rng, (64, 128), P(None, "b"))
      x = _put(mesh2, rng, (64, 128), P(None, "b"))
      ts = jax.device_put(np.linspace(-1, 1, 8, dtype=np.float32), NamedSharding(mesh2, P("a")))
      compare(
        lambda impl, g, x, ts: jax.vmap(
          lambda t: jt.threshold_backward(g, x, t, implementation=impl)
        )(ts),
        g,
        x,
        ts,
      )

  @check(f"{kind}/vmap-all-batched")
  def _():
    with _mesh_context(mesh2):
      g = _put(mesh2, rng, (8, 16, 32), P("a", None, "b"))
      x = _put(mesh2, rng, (8, 16, 32), P("a", None, "b"))
      ts = jax.device_put(np.linspace(-1, 1, 8, dtype=np.float32), NamedSharding(mesh2, P("a")))
      compare(
        lambda impl, g, x, ts: jax.vmap(
          lambda g, x, t: jt.threshold_backward(g, x, t, implementation=impl)
        )(g, x, ts),
        g,
        x,
        ts,
      )

  @check(f"{kind}/grad-threshold-activation")
  def _():
    with _mesh_context(mesh2):
      x = _put(mesh2, rng, (64, 128), P("a", "b"))
      w = _put(mesh2, rng, (64, 128), P("a", "b"))

      def loss(impl, x, w, t):
        return jnp.sum(jt.threshold(x, t, -1.0, implementation=impl) * w)

      compare(lambda impl, x, w, t: jax.grad(functools.partial(loss, impl))(x, w, t), x, w, t)

  @check(f"{kind}/grad-broadcast-operand")
  def _():
    with _mesh_context(mesh2):
      # Small dyadic values: the gradient of the broadcast operand is a sum over 64 rows, and
      # exact sums make its bits independent of the order XLA's fused or unfused reductions
      # add in (which differs between the two programs around the primitive, not in it).
      g = jax.device_put(
        rng.integers(-8, 8, (128,)).astype(np.float32) / 2, NamedSharding(mesh2, P())
      )
      x = _put(mesh2, rng, (64, 128), P("a", "b"))

      def loss(impl, g, x):
        return jnp.sum(jt.threshold_backward(g, x, 0.25, implementation=impl) ** 2)

      compare(lambda impl, g, x: jax.grad(functools.partial(loss, impl))(g, x), g, x)

  if axis_type == AxisType.Auto:

    @check(f"{kind}/shard_map-partial-manual")
    def _():
      # Manual over "a", XLA partitions the body over "b" (a MANUAL subgroup in the shardings).
      g = _put(mesh2, rng, (64, 128), P("a", "b"))
      x = _put(mesh2, rng, (64, 128), P("a", "b"))
      compare(
        lambda impl, g, x: jax.shard_map(
          lambda g, x: jt.threshold_backward(g, x, 0.25, implementation=impl),
          mesh=mesh2,
          in_specs=(P("a"), P("a")),
          out_specs=P("a"),
          axis_names={"a"},
        )(g, x),
        g,
        x,
      )

  if axis_type == AxisType.Explicit:

    @check(f"{kind}/conflicting-shardings-raise-like-jnp")
    def _():
      with _mesh_context(mesh2):
        g = _put(mesh2, rng, (64, 128), P("a", None))
        x = _put(mesh2, rng, (64, 128), P("b", None))
        expected = _error_type(lambda: jax.jit(lambda g, x: jnp.where(x > 0, g, 0))(g, x))
        assert expected is not None and "Sharding" in expected.__name__, expected
        for impl in ("reference", "ffi"):
          got = _error_type(lambda: jax.jit(functools.partial(_tb(0.25), impl))(g, x))
          assert got is expected, (impl, got, expected)


def _error_type(fn):
  try:
    fn()
  except Exception as e:  # pylint: disable=broad-except
    return type(e)
  return None


def _export_args(mesh):
  return (NamedSharding(mesh, P()), NamedSharding(mesh, P("a", "b")), NamedSharding(mesh, P()))


def export_sharded(path):
  """Writes a module exported with shardings over all devices (a broadcast grad_output)."""
  from jax import export  # pylint: disable=g-import-not-at-top

  mesh = jax.make_mesh((2, DEVICES // 2), ("a", "b"), axis_types=(AxisType.Auto,) * 2)
  in_shardings = _export_args(mesh)
  f = jax.jit(
    lambda g, x, t: jt.threshold_backward(g, x, t, implementation="ffi"),
    in_shardings=in_shardings,
    out_shardings=in_shardings[1],
  )
  specs = (
    jax.ShapeDtypeStruct((128,), np.float32),
    jax.ShapeDtypeStruct((64, 128), np.float32),
    jax.ShapeDtypeStruct((), np.float32),
  )
  exported = export.export(
    f,
    disabled_checks=[export.DisabledSafetyCheck.custom_call(n) for n in jt.ffi_targets()],
  )(*specs)
  with open(path, "wb") as f:
    f.write(exported.serialize())


def call_exported(path):
  from jax import export  # pylint: disable=g-import-not-at-top

  with open(path, "rb") as f:
    exported = export.deserialize(bytearray(f.read()))
  mesh = jax.make_mesh((2, DEVICES // 2), ("a", "b"), axis_types=(AxisType.Auto,) * 2)
  rng = np.random.default_rng(3)
  g_sharding, x_sharding, t_sharding = _export_args(mesh)
  g = jax.device_put(rng.standard_normal(128).astype(np.float32), g_sharding)
  x = jax.device_put(rng.standard_normal((64, 128)).astype(np.float32), x_sharding)
  t = jax.device_put(np.float32(0.25), t_sharding)

  @check("export/sharded-call-in-a-fresh-process")
  def _():
    hlo = jax.jit(exported.call).lower(g, x, t).compile().as_text()
    out = exported.call(g, x, t)
    ref = jax.jit(lambda g, x, t: jt.threshold_backward(g, x, t, implementation="reference"))
    expected = ref(g, x, t)
    assert TARGET_PREFIX in hlo
    assert not collectives(hlo), sorted(collectives(hlo))
    assert out.sharding.is_equivalent_to(x_sharding, 2), out.sharding
    assert np.asarray(out).tobytes() == np.asarray(expected).tobytes()


def main(argv=None):
  parser = argparse.ArgumentParser()
  parser.add_argument("--gspmd", action="store_true")
  parser.add_argument("--export", metavar="PATH")
  parser.add_argument("--call-exported", metavar="PATH")
  args = parser.parse_args(argv)
  assert len(jax.devices()) == DEVICES, jax.devices()
  assert "ffi" in jt.available_implementations(), jt.available_implementations()
  if args.gspmd:
    jax.config.update("jax_use_shardy_partitioner", False)
  if args.call_exported:
    call_exported(args.call_exported)
  else:
    for axis_type in (AxisType.Auto, AxisType.Explicit):
      run_mesh_checks(axis_type)
    if args.export:
      export_sharded(args.export)
  print(f"{len(_failures)} failed", flush=True)
  return 1 if _failures else 0


if __name__ == "__main__":
  sys.exit(main())
