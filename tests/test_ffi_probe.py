"""The benchmark's probe custom calls (probe_ffi, probe_passes) compute what they claim.

benchmarks/bench_threshold_backward.py holds the ffi path against probe_ffi as the fastest
custom call the handler design can be, and against probe_passes as the fastest the kernel's
shape can be (its passes without the emulation); a probe that computed something else (or
less) would make those limits meaningless. Not the operator: no contract beyond x > t ? g : 0
on normal numbers (XLA's threads flush subnormals, and the probes do not undo that); probe_ffi
is float32 only, probe_passes float32, bfloat16 and int8.
"""

import ml_dtypes
import numpy as np
from absl.testing import absltest
from absl.testing import parameterized

import jax
import jax.numpy as jnp

import jax_threshold as jt


class _ProbeTest(parameterized.TestCase):
  """Registers the probe target `_native.<HANDLER>()` names; skips without the extension."""

  HANDLER = ""

  def setUp(self):
    super().setUp()
    if "ffi" not in jt.available_implementations():
      self.skipTest("needs the native extension")
    from jax_threshold import _native  # pylint: disable=g-import-not-at-top
    target, platform, capsule = getattr(_native, self.HANDLER)()
    jax.ffi.register_ffi_target(target, capsule, platform=platform)
    self.target = target


class FfiProbeTest(_ProbeTest):
  HANDLER = "ffi_probe_handler"

  # 1000 elements run inline; 2^17 (512 KiB of output) run in blocks on XLA's pool.
  @parameterized.parameters(1000, 1 << 17)
  def test_matches_numpy(self, n):
    rng = np.random.default_rng(n)
    g = rng.standard_normal(n).astype(np.float32)
    x = rng.standard_normal(n).astype(np.float32)
    x[:6] = [np.nan, np.inf, -np.inf, 0.5, np.nextafter(np.float32(0.5), np.float32(1)), -0.0]
    call = jax.ffi.ffi_call(self.target, jax.ShapeDtypeStruct((n,), jnp.float32))
    out = jax.jit(lambda a, b: call(a, b, threshold=0.5))(g, x)
    np.testing.assert_array_equal(np.asarray(out), np.where(x > np.float32(0.5), g, 0))

  def test_refuses_mismatched_sizes(self):
    call = jax.ffi.ffi_call(self.target, jax.ShapeDtypeStruct((8,), jnp.float32))
    with self.assertRaisesRegex(Exception, "same element count"):
      jax.block_until_ready(call(jnp.ones(8, jnp.float32), jnp.ones(4, jnp.float32), threshold=0.5))


class PassesProbeTest(_ProbeTest):
  HANDLER = "ffi_probe_passes_handler"

  # Sizes below one 256-element step, between steps, inline (<= 64 KiB of output) and in blocks
  # on XLA's pool; the last of each dtype has 8 MiB of output or more (non-temporal stores).
  @parameterized.parameters(
      [(d, n) for d in ("float32", "bfloat16", "int8") for n in (1, 255, 1000, 4099, 1 << 17)]
      + [("float32", (1 << 21) + 77), ("bfloat16", (1 << 22) + 77), ("int8", (1 << 23) + 77)])
  def test_matches_numpy(self, dtype, n):
    rng = np.random.default_rng(n)
    if dtype == "int8":
      g = rng.integers(-128, 128, n).astype(np.int8)
      x = rng.integers(-128, 128, n).astype(np.int8)
    else:
      np_dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.float32
      g = rng.standard_normal(n).astype(np_dtype)
      x = rng.standard_normal(n).astype(np_dtype)
      x[:min(n, 4)] = np.array([np.nan, np.inf, -np.inf, 0.5], np.float32)[:min(n, 4)]
    call = jax.ffi.ffi_call(self.target, jax.ShapeDtypeStruct((n,), g.dtype))
    out = np.asarray(jax.jit(lambda a, b: call(a, b, threshold=0.5))(g, x))
    want = np.where(x.astype(np.float32) > np.float32(0.5), g, np.zeros((), g.dtype))
    np.testing.assert_array_equal(out.view(np.uint8), want.view(np.uint8))

  def test_refuses_other_dtypes(self):
    call = jax.ffi.ffi_call(self.target, jax.ShapeDtypeStruct((8,), jnp.float16))
    with self.assertRaisesRegex(Exception, "float32, bfloat16 and int8 only"):
      jax.block_until_ready(call(jnp.ones(8, jnp.float16), jnp.ones(8, jnp.float16), threshold=0.5))

  def test_refuses_mixed_dtypes(self):
    call = jax.ffi.ffi_call(self.target, jax.ShapeDtypeStruct((8,), jnp.float32))
    with self.assertRaisesRegex(Exception, "one dtype and element count"):
      jax.block_until_ready(call(jnp.ones(8, jnp.float32), jnp.ones(8, jnp.int8), threshold=0.5))


if __name__ == "__main__":
  absltest.main()
