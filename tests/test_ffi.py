"""The XLA FFI custom call ("ffi" implementation) against the reference lowering.

The whole primitive suite already runs through the FFI path (test_primitive.py
and test_transformations.py are parametrized over available implementations);
this file covers what is specific to the custom call: the lowered HLO (its one
target, aliasing, one call per vmap batch), bit-for-bit property
tests against the reference on random shapes / dtypes / thresholds, sizes the
handler splits over several kernel blocks, many Python threads at once, handler
errors carrying the aclnn status code, the jax.export round trip in a new
process, and shard_map.
"""

import concurrent.futures
import os
import tempfile
import textwrap

from absl.testing import absltest
from absl.testing import parameterized
import hypothesis
from hypothesis import strategies as st
import jax
from jax import export
import jax.numpy as jnp
import numpy as np

import jax_threshold as jt
from jax_threshold import _threshold
import dtype_lists
from child_process import run_child
import oracle

HAS_FFI = "ffi" in jt.available_implementations()
SKIP_REASON = (
  "the native extension with the XLA FFI handler is not built (implementations: "
  f"{jt.available_implementations()}); pip install . to build it"
)
if HAS_FFI:
  from jax_threshold import _native

X64 = jax.config.jax_enable_x64
DTYPES = list(dtype_lists.SUPPORTED if X64 else dtype_lists.CANONICAL)
NAN, INF = float("nan"), float("inf")
# Outputs the CPU handler splits over several kernel blocks (from 128 KiB; for 1-byte dtypes
# tests take 4 * LARGE): the calling thread and the executor's block workers run them.
LARGE = 100_003


def _threshold_operand_dtype(dtype):
  return np.float64 if np.dtype(dtype) == np.float64 else np.float32


def _random(rng, shape, dtype, threshold=None):
  """Values of `dtype` that stress the comparison: specials, and neighbours of the threshold."""
  dtype = np.dtype(dtype)
  size = int(np.prod(shape, dtype=np.int64))
  if np.issubdtype(dtype, np.integer):
    info = np.iinfo(dtype)
    pool = [info.min, info.min + 1, -1, 0, 1, 2, 3, info.max - 1, info.max]
    if threshold is not None and np.isfinite(threshold):
      k = int(np.floor(threshold))
      pool += [v for v in (k - 1, k, k + 1) if info.min <= v <= info.max]
    values = np.where(
      rng.random(size) < 0.5,
      rng.choice(np.array(pool, np.int64), size),
      rng.integers(info.min, info.max, size, endpoint=True),
    )
    return values.astype(dtype).reshape(shape)
  pool = [NAN, INF, -INF, 0.0, -0.0, 1e-9, -1e-9, 1.0, -1.0, 2.5]
  if threshold is not None and np.isfinite(threshold):
    t32 = np.float32(threshold)
    pool += [
      float(np.nextafter(t32, np.float32(-INF))),
      float(t32),
      float(np.nextafter(t32, np.float32(INF))),
      float(threshold),
    ]
  values = np.where(
    rng.random(size) < 0.5, rng.choice(np.array(pool), size), rng.standard_normal(size) * 4
  )
  with np.errstate(over="ignore"):  # a huge threshold's neighbours become inf in float16
    return values.astype(dtype).reshape(shape)


def _custom_call_targets(hlo_text):
  return [
    line.split("@", 1)[1].split("(", 1)[0]
    for line in hlo_text.splitlines()
    if "custom_call @" in line
  ]


def _jit_both(fn):
  return (
    jax.jit(lambda *a: fn(*a, implementation="reference")),
    jax.jit(lambda *a: fn(*a, implementation="ffi")),
  )


@absltest.skipUnless(HAS_FFI, SKIP_REASON)
class FfiLoweringTest(parameterized.TestCase):
  def _hlo(self, fn, *args):
    return jax.jit(fn).lower(*args).as_text()

  def test_one_versioned_target_is_emitted_and_registered(self):
    self.assertEqual(jt.ffi_targets(), ("jax_threshold_threshold_backward_v2",))
    self.assertEqual(jt.ffi_targets(), (_native.FFI_TARGET,))
    names = {(name, platform) for name, platform, _ in _native.ffi_handlers()}
    self.assertIn((_native.FFI_TARGET, "cpu"), names)

  def test_ffi_lowers_to_the_custom_call_and_reference_to_none(self):
    g = x = jnp.ones((4, 5), jnp.float32)
    t = jnp.float32(0.5)
    ffi_hlo = self._hlo(
      lambda g, x, t: jt.threshold_backward(g, x, t, implementation="ffi"), g, x, t
    )
    ref_hlo = self._hlo(
      lambda g, x, t: jt.threshold_backward(g, x, t, implementation="reference"), g, x, t
    )
    self.assertEqual(_custom_call_targets(ffi_hlo), ["jax_threshold_threshold_backward_v2"])
    self.assertEqual(_custom_call_targets(ref_hlo), [])

  def test_out_does_not_alias_grad_output(self):
    # An output aliased to grad_output makes XLA copy grad_output first (benchmarks/README.md,
    # measurement log, "Aliasing").
    x = jnp.ones((4, 5), jnp.float32)
    for g in (x, jnp.ones((5,), jnp.float32)):
      hlo = self._hlo(lambda g, x: jt.threshold_backward(g, x, 0.5, implementation="ffi"), g, x)
      self.assertNotIn("output_operand_alias", hlo)

  def test_donated_grad_output_gives_the_same_bits(self):
    rng = np.random.default_rng(1)
    x = _random(rng, (LARGE,), np.float32, 0.25)
    g = _random(rng, (LARGE,), np.float32)
    expected = jt.threshold_backward(g, x, 0.25, implementation="reference")
    f = jax.jit(
      lambda g, x: jt.threshold_backward(g, x, 0.25, implementation="ffi"), donate_argnums=0
    )
    np.testing.assert_array_equal(oracle.bits(f(jnp.asarray(g), x)), oracle.bits(expected))

  def test_vmap_is_one_custom_call_for_the_whole_batch(self):
    g = x = jnp.ones((6, 7), jnp.float32)
    ts = jnp.linspace(-1, 1, 6, dtype=jnp.float32)
    f = jax.vmap(lambda g, x, t: jt.threshold_backward(g, x, t, implementation="ffi"))
    self.assertEqual(
      _custom_call_targets(self._hlo(f, g, x, ts)), ["jax_threshold_threshold_backward_v2"]
    )
    nested = jax.vmap(
      jax.vmap(lambda g, x, t: jt.threshold_backward(g, x, t, implementation="ffi"))
    )
    hlo = self._hlo(nested, jnp.ones((2, 3, 4)), jnp.ones((2, 3, 4)), jnp.ones((2, 3)))
    self.assertEqual(len(_custom_call_targets(hlo)), 1)

  def test_grad_runs_through_the_custom_call(self):
    x = jnp.linspace(-2, 2, 9, dtype=jnp.float32)
    f = jax.grad(lambda x: jt.threshold(x, 0.5, -1.0, implementation="ffi").sum())
    self.assertTrue(set(_custom_call_targets(self._hlo(f, x))) & set(jt.ffi_targets()))
    ref = jax.grad(lambda x: jt.threshold(x, 0.5, -1.0, implementation="reference").sum())
    np.testing.assert_array_equal(oracle.bits(f(x)), oracle.bits(ref(x)))


@absltest.skipUnless(HAS_FFI, SKIP_REASON)
class FfiMatchesReferenceTest(parameterized.TestCase):
  @hypothesis.settings(
    max_examples=60, deadline=None, suppress_health_check=[hypothesis.HealthCheck.too_slow]
  )
  @hypothesis.given(
    dtype=st.sampled_from(DTYPES),
    shapes=st.sampled_from(
      [
        ((), ()),
        ((1,), ()),
        ((5,), (5,)),
        ((3, 1), (1, 4)),
        ((2, 3, 4), (4,)),
        ((0, 3), (1, 3)),
        ((2, 1, 3, 1), (5, 3, 1)),
        ((1, 1, 1, 1, 1, 1, 1, 2), (2,)),
        ((257,), (1,)),
      ]
    ),
    swap=st.booleans(),
    threshold=st.one_of(
      st.sampled_from(
        [
          0.0,
          -0.0,
          NAN,
          INF,
          -INF,
          1e-9,
          -1e-9,
          0.5,
          2.5,
          -2.5,
          127,
          128,
          -128,
          -129,
          255,
          256,
          2**24 + 1,
          2**31,
          -(2**31) - 1,
          1e30,
        ]
      ),
      st.floats(-300, 300, allow_nan=False),
      st.integers(-300, 300),
    ),
    seed=st.integers(0, 2**32 - 1),
  )
  def test_property_bit_for_bit(self, dtype, shapes, swap, threshold, seed):
    g_shape, x_shape = shapes[::-1] if swap else shapes
    rng = np.random.default_rng(seed)
    g, x = _random(rng, g_shape, dtype), _random(rng, x_shape, dtype, threshold)
    # A traced threshold (the operand target, compiled once per shape/dtype) ...
    ref, ffi = _jit_both(jt.threshold_backward)
    t_op, _ = _threshold.operand(threshold, np.dtype(dtype))
    expected = ref(g, x, t_op)
    np.testing.assert_array_equal(oracle.bits(ffi(g, x, t_op)), oracle.bits(expected))
    # ... and the same value as a constant.
    ffi_const = jax.jit(lambda g, x: jt.threshold_backward(g, x, threshold, implementation="ffi"))
    ref_const = jax.jit(
      lambda g, x: jt.threshold_backward(g, x, threshold, implementation="reference")
    )
    np.testing.assert_array_equal(oracle.bits(ffi_const(g, x)), oracle.bits(ref_const(g, x)))

  @parameterized.product(dtype=DTYPES, threshold=[0.0, 0.5, -1.0, NAN])
  def test_large_inputs_run_in_several_blocks(self, dtype, threshold):
    rng = np.random.default_rng(3)
    size = LARGE if np.dtype(dtype).itemsize > 1 else 4 * LARGE
    x = _random(rng, (size,), dtype, threshold)
    g = _random(rng, (size,), dtype)
    ref, ffi = _jit_both(jt.threshold_backward)
    t = np.asarray(threshold, _threshold_operand_dtype(dtype))
    np.testing.assert_array_equal(oracle.bits(ffi(g, x, t)), oracle.bits(ref(g, x, t)))

  @parameterized.named_parameters(
    # Above the executor's rank limit of 8: merged, or (alternating broadcasts) looped over.
    ("rank10_mergeable", (2, 1, 1, 2, 1, 1, 2, 1, 1, 3), (2, 1, 1, 2, 1, 1, 2, 1, 1, 1)),
    ("rank10_alternating", (2, 1, 2, 1, 2, 1, 2, 1, 2, 1), (1, 2, 1, 2, 1, 2, 1, 2, 1, 2)),
    ("rank9_lower_rank_x", (3, 1, 2, 1, 2, 1, 2, 1, 2), (2, 1, 2, 1, 2, 1, 2)),
    ("rank12_empty", (2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 0, 1), (1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 1)),
    ("empty_broadcast", (3, 1), (1, 0)),
    ("scalar_and_vector", (), (5,)),
  )
  def test_shapes_beyond_the_executor_limits(self, g_shape, x_shape):
    rng = np.random.default_rng(10)
    g, x = _random(rng, g_shape, np.float32), _random(rng, x_shape, np.float32, 0.25)
    ref, ffi = _jit_both(jt.threshold_backward)
    np.testing.assert_array_equal(
      oracle.bits(ffi(g, x, np.float32(0.25))), oracle.bits(ref(g, x, np.float32(0.25)))
    )

  def test_vmap_with_an_empty_batch_or_empty_rows(self):
    for g_shape, t_shape in (((0, 5), (0,)), ((3, 0), (3,))):
      g = np.ones(g_shape, np.float32)
      f = jax.jit(jax.vmap(lambda g, x, t: jt.threshold_backward(g, x, t, implementation="ffi")))
      out = f(g, g, np.zeros(t_shape, np.float32))
      self.assertEqual(out.shape, g_shape)

  def test_large_broadcast_input(self):
    rng = np.random.default_rng(4)
    x = _random(rng, (300, 1, 257), np.float32, 0.5)
    g = _random(rng, (7, 1), np.float32)
    ref, ffi = _jit_both(jt.threshold_backward)
    np.testing.assert_array_equal(
      oracle.bits(ffi(g, x, np.float32(0.5))), oracle.bits(ref(g, x, np.float32(0.5)))
    )

  @parameterized.parameters(
    ((6, 50), (0, 0, 0)),
    ((6, 50), (None, None, 0)),
    ((6, 50), (0, None, 0)),
    ((6, 4000), (0, 0, 0)),
    ((6, 4000), (1, 1, 0)),
    ((6, 4000), (None, 0, 0)),
  )
  def test_vmap_over_thresholds(self, shape, in_axes):
    rng = np.random.default_rng(5)
    batch = shape[0]
    g = _random(rng, shape, np.float32)
    x = _random(rng, shape, np.float32, 0.5)

    def arg(a, axis):
      if axis is None:
        return a[0]
      return jnp.moveaxis(a, 0, axis)

    ts = np.array([0.0, 0.5, -1.0, NAN, INF, 2.0][:batch], np.float32)
    outs = []
    for impl in ("reference", "ffi"):
      f = jax.jit(
        jax.vmap(
          lambda g, x, t, impl=impl: jt.threshold_backward(g, x, t, implementation=impl),
          in_axes=in_axes,
        )
      )
      outs.append(f(arg(g, in_axes[0]), arg(x, in_axes[1]), ts))
    np.testing.assert_array_equal(oracle.bits(outs[1]), oracle.bits(outs[0]))

  def test_nested_vmap_with_integer_thresholds(self):
    rng = np.random.default_rng(6)
    x = _random(rng, (3, 4, 70), np.int8, 0)
    g = _random(rng, (3, 4, 70), np.int8)
    ts = rng.integers(-128, 127, (3, 4)).astype(np.int8)
    outs = []
    for impl in ("reference", "ffi"):
      f = jax.jit(
        jax.vmap(
          jax.vmap(lambda g, x, t, impl=impl: jt.threshold_backward(g, x, t, implementation=impl))
        )
      )
      outs.append(f(g, x, ts))
    np.testing.assert_array_equal(outs[1], outs[0])

  def test_many_threads_call_one_jitted_function(self):
    ffi = jax.jit(lambda g, x, t: jt.threshold_backward(g, x, t, implementation="ffi"))
    ref = jax.jit(lambda g, x, t: jt.threshold_backward(g, x, t, implementation="reference"))
    rng = np.random.default_rng(8)
    cases = []
    for i in range(24):
      size = LARGE if i % 2 else 1000  # several blocks, and one on the calling thread
      t = np.float32(rng.standard_normal())
      cases.append((_random(rng, (size,), np.float32), _random(rng, (size,), np.float32, t), t))
    expected = [np.asarray(ref(*c)) for c in cases]
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
      for _ in range(3):
        results = list(pool.map(lambda c: np.asarray(ffi(*c)), cases))
        for got, want in zip(results, expected):
          np.testing.assert_array_equal(oracle.bits(got), oracle.bits(want))


@absltest.skipUnless(HAS_FFI, SKIP_REASON)
class FfiErrorTest(parameterized.TestCase):
  """Direct custom calls that phase one (or the handler) rejects."""

  def _call(self, target, out_shape, out_dtype, *args, **attrs):
    f = jax.ffi.ffi_call(target, jax.ShapeDtypeStruct(out_shape, out_dtype))
    return jax.block_until_ready(jax.jit(lambda *a: f(*a, **attrs))(*args))

  def test_unsupported_dtype_reports_the_aclnn_status(self):
    bad = dtype_lists.UNSUPPORTED_INTEGER
    g = x = jnp.ones((4,), bad)
    with self.assertRaisesRegex(Exception, rf"161002.*ACLNN_ERR_PARAM_INVALID(.|\n)*{bad.name}"):
      self._call(jt.ffi_targets()[0], (4,), bad, g, x, jnp.zeros((), bad))

  def test_grad_output_and_x_dtypes_differ(self):
    with self.assertRaisesRegex(Exception, "161002"):
      self._call(
        jt.ffi_targets()[0],
        (4,),
        jnp.float32,
        jnp.ones((4,), jnp.float32),
        jnp.ones((4,), jnp.int32),
        jnp.float32(0),
      )

  def test_out_shape_is_not_the_broadcast_shape(self):
    with self.assertRaisesRegex(
      Exception, r"result's shape \[5\] is not the broadcast shape \[4\]"
    ):
      self._call(
        jt.ffi_targets()[0],
        (5,),
        jnp.float32,
        jnp.ones((4,), jnp.float32),
        jnp.ones((4,), jnp.float32),
        jnp.float32(0),
      )

  def test_non_broadcasting_batched_threshold(self):
    with self.assertRaisesRegex(Exception, r"threshold \[2,1\] do not broadcast to out \[4,3\]"):
      self._call(
        jt.ffi_targets()[0],
        (4, 3),
        jnp.float32,
        jnp.ones((4, 3), jnp.float32),
        jnp.ones((4, 3), jnp.float32),
        jnp.zeros((2, 1), jnp.float32),
      )

  def test_a_direct_call_of_the_target_computes(self):
    # The example of CANN's aclnnThresholdBackward documentation (docs/behaviour.md §1).
    g = np.array([4.5, 4.4, 4.3, 4.2], np.float32)
    x = np.array([0.2, 1.2, 2.2, 3.2], np.float32)
    out = self._call(jt.ffi_targets()[0], (4,), jnp.float32, g, x, np.float32(1.0))
    np.testing.assert_array_equal(out, np.array([0, 4.4, 4.3, 4.2], np.float32))


_EXPORT_CHILD = textwrap.dedent("""
    import sys
    import numpy as np
    import jax
    from jax import export
    import jax_threshold  # registers the FFI targets
    with open(sys.argv[1], "rb") as f:
      exported = export.deserialize(bytearray(f.read()))
    data = np.load(sys.argv[2])
    outs, i = [], 0
    while f"call{i}_0" in data:  # call i's arguments: call{i}_0, call{i}_1, ...
      n = sum(1 for k in data.files if k.startswith(f"call{i}_"))
      outs.append(np.asarray(exported.call(*(data[f"call{i}_{j}"] for j in range(n)))))
      i += 1
    np.savez(sys.argv[3], *outs)
""")


@absltest.skipUnless(HAS_FFI, SKIP_REASON)
class FfiExportTest(parameterized.TestCase):
  def _f(self):
    return jax.jit(lambda g, x, t: jt.threshold_backward(g, x, t, implementation="ffi"))

  def test_export_needs_the_targets_allowed(self):
    args = (jnp.ones((3,), jnp.float32),) * 2 + (jnp.float32(0),)
    with self.assertRaisesRegex(Exception, "custom call"):
      export.export(self._f())(*args)

  def _round_trip_in_a_new_process(self, exported, calls):
    """Runs `exported` in a new interpreter on each argument tuple of `calls`; the outputs."""
    try:
      import flatbuffers  # noqa: F401  # pylint: disable=g-import-not-at-top,unused-import
    except ImportError:
      self.skipTest("jax.export serialization needs the 'flatbuffers' package")
    self.assertIn("jax_threshold_threshold_backward_v2", exported.mlir_module())
    with tempfile.TemporaryDirectory() as tmp:
      module, data, out = (os.path.join(tmp, n) for n in ("f.bin", "in.npz", "out.npz"))
      with open(module, "wb") as f:
        f.write(exported.serialize())
      np.savez(
        data, **{f"call{i}_{j}": a for i, args in enumerate(calls) for j, a in enumerate(args)}
      )
      child = os.path.join(tmp, "child.py")
      with open(child, "w") as f:
        f.write(_EXPORT_CHILD)
      code = (
        f"import runpy, sys; sys.argv = {[child, module, data, out]!r}; "
        f"runpy.run_path({child!r}, run_name='__main__')"
      )
      proc = run_child(["-c", code], timeout=240)
      self.assertEqual(proc.returncode, 0, proc.stderr[-3000:])
      with np.load(out) as outs:
        return [outs[f"arr_{i}"] for i in range(len(calls))]

  def test_round_trip_in_a_new_process(self):
    rng = np.random.default_rng(9)
    g = _random(rng, (2, LARGE // 2), np.float32)
    x = _random(rng, (2, LARGE // 2), np.float32, 0.5)
    t = np.float32(0.5)
    exported = export.export(
      self._f(),
      disabled_checks=[export.DisabledSafetyCheck.custom_call(n) for n in jt.ffi_targets()],
    )(g, x, t)
    expected = np.asarray(jt.threshold_backward(g, x, t, implementation="reference"))
    (out,) = self._round_trip_in_a_new_process(exported, [(g, x, t)])
    np.testing.assert_array_equal(oracle.bits(out), oracle.bits(expected))

  def test_symbolic_batch_round_trip_in_a_new_process(self):
    # One module for every batch size: the symbolic dim reaches the custom call's result type,
    # and the handler reads the real dims from its buffers at run time.
    (b,) = export.symbolic_shape("b")

    def fn(g, x, t):  # threshold_backward, and the gradient of threshold (its transpose too)
      act_grad = jax.grad(lambda x: jnp.sum(jt.threshold(x, t, -1.0, implementation="ffi") * g))
      return jt.threshold_backward(g, x, t, implementation="ffi"), act_grad(x)

    exported = export.export(
      jax.jit(fn),
      disabled_checks=[export.DisabledSafetyCheck.custom_call(n) for n in jt.ffi_targets()],
    )(
      jax.ShapeDtypeStruct((b, 5), jnp.float32),
      jax.ShapeDtypeStruct((b, 5), jnp.float32),
      jax.ShapeDtypeStruct((), jnp.float32),
    )
    rng = np.random.default_rng(10)
    calls = []
    for batch in (3, LARGE // 5 + 1):  # one block, and several
      calls.append(
        (
          _random(rng, (batch, 5), np.float32),
          _random(rng, (batch, 5), np.float32, 0.5),
          np.float32(0.5),
        )
      )
    outs = self._round_trip_in_a_new_process(exported, calls)
    for (g, x, t), out in zip(calls, outs):
      self.assertEqual(out.shape, (2,) + g.shape)
      expected = oracle.threshold_backward(g, x, t)
      np.testing.assert_array_equal(oracle.bits(out[0]), oracle.bits(expected))
      np.testing.assert_array_equal(oracle.bits(out[1]), oracle.bits(expected))


_SHARD_MAP_CHILD = textwrap.dedent("""
    import numpy as np
    import jax, jax.numpy as jnp
    from jax.sharding import Mesh, PartitionSpec as P
    import jax_threshold as jt
    assert len(jax.devices()) == 2, jax.devices()
    mesh = Mesh(np.array(jax.devices()), ("d",))
    rng = np.random.default_rng(0)
    g = rng.standard_normal((8, 33)).astype(np.float32)
    x = rng.standard_normal((8, 33)).astype(np.float32)
    def run(impl, traced):
      def body(g, x, t):
        return jt.threshold_backward(g, x, t if traced else 0.25, implementation=impl)
      f = jax.shard_map(body, mesh=mesh, in_specs=(P("d"), P("d"), P()), out_specs=P("d"))
      return np.asarray(jax.jit(f)(g, x, np.float32(0.25)))
    for traced in (False, True):
      ref, ffi = run("reference", traced), run("ffi", traced)
      assert ref.tobytes() == ffi.tobytes(), (traced, ref, ffi)
      assert (ffi == np.where(x > np.float32(0.25), g, 0)).all()
    # Operands are brought to a common varying set before bind, so the output varies over
    # "d" whichever operand is sharded, and the gradient of an unsharded (invariant) input is
    # summed over the shards by JAX's own pcast transpose.
    for impl in ("reference", "ffi"):
      def typed(g, x, t):
        out = jt.threshold_backward(g, x, t, implementation=impl)
        assert "d" in jax.typeof(out).mat.varying, jax.typeof(out)
        return out
      f = jax.shard_map(typed, mesh=mesh, in_specs=(P(), P("d"), P()), out_specs=P("d"))
      out = np.asarray(jax.jit(f)(g[:4], x, np.float32(0.25)))
      assert (out == np.where(x > np.float32(0.25), np.concatenate([g[:4], g[:4]]), 0)).all()
      def loss(xs):
        act = jax.shard_map(lambda x: jt.threshold(x, 0.25, -1.0, implementation=impl),
                            mesh=mesh, in_specs=P("d"), out_specs=P("d"))
        return jnp.sum(act(xs) * g)
      dx = np.asarray(jax.jit(jax.grad(loss))(x))
      assert (dx == np.where(x > np.float32(0.25), g, 0)).all(), impl
      def loss_g(g0):
        f = jax.shard_map(lambda g, x: jt.threshold_backward(g, x, 0.25, implementation=impl),
                          mesh=mesh, in_specs=(P(), P("d")), out_specs=P("d"))
        return jnp.sum(f(g0, x))
      dg = np.asarray(jax.jit(jax.grad(loss_g))(g[:4]))
      expected = (x[:4] > np.float32(0.25)).astype(np.float32) + (x[4:] > np.float32(0.25))
      assert (dg == expected).all(), (impl, dg, expected)
    hlo = jax.jit(jax.shard_map(
        lambda g, x, t: jt.threshold_backward(g, x, t, implementation="ffi"), mesh=mesh,
        in_specs=(P("d"), P("d"), P()), out_specs=P("d"))).lower(g, x, np.float32(0)).as_text()
    assert "jax_threshold_threshold_backward_v2" in hlo
    print("ok")
""")


@absltest.skipUnless(HAS_FFI, SKIP_REASON)
class FfiShardMapTest(absltest.TestCase):
  def test_shard_map_on_two_cpu_devices(self):
    proc = run_child(["-c", _SHARD_MAP_CHILD], devices=2, timeout=240)
    self.assertEqual(proc.returncode, 0, proc.stderr[-3000:])
    self.assertIn("ok", proc.stdout)


if __name__ == "__main__":
  absltest.main()
