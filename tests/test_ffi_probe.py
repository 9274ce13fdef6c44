"""The benchmark's plain-loop custom call (probe_ffi) computes what it claims.

benchmarks/bench_threshold_backward.py holds the ffi path against this probe as the fastest
custom call the handler design can be; a probe that computed something else (or less) would
make that limit meaningless. Not the operator: float32 only, no contract beyond x > t ? g : 0
on normal numbers (XLA's threads flush subnormals, and the probe does not undo that).
"""

import numpy as np
from absl.testing import absltest
from absl.testing import parameterized

import jax
import jax.numpy as jnp

import jax_threshold as jt


def _probe():
  from jax_threshold import _native  # pylint: disable=g-import-not-at-top
  target, platform, capsule = _native.ffi_probe_handler()
  jax.ffi.register_ffi_target(target, capsule, platform=platform)
  return target


class FfiProbeTest(parameterized.TestCase):

  def setUp(self):
    super().setUp()
    if "ffi" not in jt.available_implementations():
      self.skipTest("needs the native extension")
    self.target = _probe()

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


if __name__ == "__main__":
  absltest.main()
