"""The custom call on batch and shape edge cases: a batch of one threshold, a per-element
threshold batch of any dtype (memory O(output)), and empty results whose dims would overflow
a stride or byte count. Cases that could crash run in a subprocess."""

import os
import textwrap

from absl.testing import absltest
from absl.testing import parameterized
import jax
import jax.numpy as jnp
import numpy as np

from child_process import run_child
import dtype_lists
import jax_threshold as jt
from jax_threshold import _dtypes
import oracle

HAS_FFI = "ffi" in jt.available_implementations()
SKIP_REASON = "the native extension with the XLA FFI handler is not built"
TARGET = "jax_threshold_threshold_backward_v2"


def _small_values(dtype, n, rng):
  """n values of `dtype` around 0 (within -12..12), ties with integer thresholds included."""
  if dtype.kind in "iu":
    return rng.integers(max(np.iinfo(dtype).min, -12), 12, n, endpoint=True).astype(dtype)
  return (rng.standard_normal(n) * 4).astype(dtype)


def _ffi_call(result, **kwargs):
  """A hand-written call of the target with the lowering's attribute for a threshold operand."""
  call = jax.ffi.ffi_call(TARGET, result, **kwargs)
  return lambda *args: call(*args, relu_grad=False)


@absltest.skipUnless(HAS_FFI, SKIP_REASON)
class BatchOfOneThresholdTest(parameterized.TestCase):
  @parameterized.parameters("ffi", "reference")
  def test_vmap_over_one_threshold_matches_the_oracle(self, impl):
    g = jnp.array([1.0, 2.0, 3.0], jnp.float32)
    x = jnp.array([0.2, 0.7, 1.5], jnp.float32)
    f = jax.vmap(lambda t: jt.threshold_backward(g, x, t, implementation=impl))
    out = np.asarray(f(jnp.array([0.5], jnp.float32)))
    self.assertEqual(out.shape, (1, 3))
    np.testing.assert_array_equal(
      out[0], oracle.threshold_backward(np.asarray(g), np.asarray(x), 0.5)
    )

  def test_direct_call_with_a_one_element_threshold_of_rank_two(self):
    g = x = jnp.array([0.2, 0.7, 1.5], jnp.float32)
    call = _ffi_call(jax.ShapeDtypeStruct((1, 3), jnp.float32))
    out = np.asarray(jax.jit(call)(g, x, jnp.full((1, 1), 0.5, jnp.float32)))
    np.testing.assert_array_equal(out, np.array([[0, 0.7, 1.5]], np.float32))

  def test_one_element_threshold_whose_rank_exceeds_the_result_is_refused(self):
    g = x = jnp.ones((3,), jnp.float32)
    call = _ffi_call(jax.ShapeDtypeStruct((3,), jnp.float32))
    with self.assertRaisesRegex(Exception, r"not the broadcast shape \[1,3\]"):
      jax.block_until_ready(jax.jit(call)(g, x, jnp.zeros((1, 1), jnp.float32)))


@absltest.skipUnless(HAS_FFI, SKIP_REASON)
class PerElementThresholdBatchTest(parameterized.TestCase):
  """A threshold of out's shape: every element its own threshold, in any real dtype."""

  # Every (x, threshold) dtype pair the lowering emits (the 64-bit ones under x64).
  @parameterized.named_parameters(*dtype_lists.by_row(xdtype=dtype_lists.SUPPORTED))
  def test_bits_match_the_oracle(self, xdtype):
    for tdtype in _dtypes.threshold_operand_dtypes(xdtype):
      with (
        self.subTest(threshold=tdtype.name),
        jax.enable_x64(8 in (xdtype.itemsize, tdtype.itemsize)),
      ):
        rng = np.random.default_rng(3)
        n = 1000
        g, x, t = (_small_values(d, n, rng) for d in (xdtype, xdtype, tdtype))
        t[::7] = 0
        call = _ffi_call(jax.ShapeDtypeStruct((n,), xdtype))
        out = np.asarray(jax.jit(call)(g, x, t))
        expected = np.array([oracle.threshold_backward(g[i], x[i], t[i]) for i in range(n)], xdtype)
        np.testing.assert_array_equal(oracle.bits(out), oracle.bits(expected))

  def test_threshold_of_a_dtype_the_lowering_never_emits_is_refused(self):
    x = jnp.ones((8,), jnp.float32)
    call = _ffi_call(jax.ShapeDtypeStruct((8,), jnp.float32))
    with self.assertRaisesRegex(
      Exception, "threshold has dtype float16, which the kernel does not read"
    ):
      jax.block_until_ready(jax.jit(call)(x, x, jnp.zeros((8,), jnp.float16)))

  def test_an_x_dtype_without_a_kernel_is_refused_for_its_own_dtype(self):
    # The threshold's dtype is checked once, by phase one, and only for an x it can run.
    refused = dtype_lists.UNSUPPORTED_INTEGER
    x = jnp.ones((8,), refused)
    call = _ffi_call(jax.ShapeDtypeStruct((8,), refused))
    for t_dtype in (refused, jnp.float16, jnp.float32):
      with self.subTest(t_dtype=t_dtype):
        with self.assertRaisesRegex(
          Exception, f"161002(.|\\n)*has dtype {refused.name}, not supported"
        ):
          jax.block_until_ready(jax.jit(call)(x, x, jnp.zeros((), t_dtype)))

  @absltest.skipIf(
    "asan" in os.environ.get("LD_PRELOAD", ""),
    "AddressSanitizer's allocator keeps freed memory in quarantine",
  )
  def test_peak_memory_is_bounded_by_the_output(self):
    # float32 thresholds, one per element of a float16 output of 2^20 elements (2 MiB).
    code = textwrap.dedent("""
        import resource, jax, jax.numpy as jnp, numpy as np
        n = 1 << 20
        x = np.linspace(-2, 2, n).astype(np.float16)
        t = np.linspace(2, -2, n).astype(np.float16).astype(np.float32)
        call = jax.jit(lambda *a: jax.ffi.ffi_call(
            "jax_threshold_threshold_backward_v2", jax.ShapeDtypeStruct((n,), jnp.float16)
        )(*a, relu_grad=False))
        import jax_threshold
        args = [jax.device_put(a) for a in (x, x, t)]
        compiled = call.lower(*args).compile()
        jax.block_until_ready(args)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        out = np.asarray(compiled(*args))
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        assert (out == np.where(x > t, x, np.float16(0))).all()
        print((after - before) * 1024)
    """)
    proc = run_child(["-c", code], timeout=300)
    self.assertEqual(proc.returncode, 0, proc.stderr[-3000:])
    growth = int(proc.stdout.split()[-1])
    out_bytes = 2 << 20
    self.assertLessEqual(growth, 4 * out_bytes + (64 << 20), f"peak RSS grew by {growth} bytes")


@absltest.skipUnless(HAS_FFI, SKIP_REASON)
class EmptyResultTest(parameterized.TestCase):
  # Shapes XLA itself accepts (it refuses a zero after a huge dim: [2^62, 0, 4]).
  @parameterized.parameters([(0, 2**62, 4)], [(1, 0, 2**62)], [(0, 2**61, 2)])
  def test_empty_result_with_huge_dims_is_empty(self, shape):
    code = textwrap.dedent(f"""
        import jax, jax.numpy as jnp, numpy as np
        import jax_threshold
        shape = {shape!r}
        call = lambda *a: jax.ffi.ffi_call(
            "jax_threshold_threshold_backward_v2", jax.ShapeDtypeStruct(shape, jnp.float32),
            has_side_effect=True)(*a, relu_grad=False)
        g = x = jnp.zeros(shape, jnp.float32)
        out = jax.block_until_ready(jax.jit(call)(g, x, jnp.float32(0.5)))
        print(out.shape == shape)
    """)
    proc = run_child(["-c", code], timeout=300)
    self.assertEqual(proc.returncode, 0, proc.stderr[-3000:])
    self.assertEqual(proc.stdout.split()[-1], "True")


if __name__ == "__main__":
  absltest.main()
