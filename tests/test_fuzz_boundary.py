"""The custom-call boundary fuzzer (boundary_fuzz.py), seeded and time-bounded, in a child process.

JAX_THRESHOLD_FUZZ_SECONDS (default 10) bounds the run, JAX_THRESHOLD_FUZZ_SEED (default 0)
seeds it. Every generated call must be a clean error or the oracle's bits; an abort of the child
fails this test with the call it was running.
"""

import os
import subprocess
import sys

from absl.testing import absltest

import jax_threshold as jt

HAS_FFI = "ffi" in jt.available_implementations()
_TESTS_DIR = os.path.dirname(os.path.abspath(__file__))


@absltest.skipUnless(HAS_FFI, "the native extension with the XLA FFI handler is not built")
class BoundaryFuzzTest(absltest.TestCase):
  def test_every_call_is_a_clean_error_or_the_oracles_bits(self):
    seconds = float(os.environ.get("JAX_THRESHOLD_FUZZ_SECONDS", "10"))
    seed = int(os.environ.get("JAX_THRESHOLD_FUZZ_SEED", "0"))
    env = dict(os.environ)
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(jt.__file__)))
    env["PYTHONPATH"] = os.pathsep.join([package_root, _TESTS_DIR, env.get("PYTHONPATH", "")])
    env["JAX_PLATFORMS"] = "cpu"
    env["XLA_FLAGS"] = env.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4"
    proc = subprocess.run(
      [sys.executable, os.path.join(_TESTS_DIR, "boundary_fuzz.py"), str(seconds), str(seed)],
      env=env,
      capture_output=True,
      text=True,
      timeout=seconds + 600,
      check=False,
      cwd=package_root,
    )
    cases = [line for line in proc.stdout.splitlines() if line.startswith("case ")]
    last = cases[-1] if cases else "(none)"
    self.assertEqual(
      proc.returncode,
      0,
      f"seed {seed}: rc {proc.returncode}; last call: {last}\n"
      f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}",
    )
    summary = proc.stdout.splitlines()[-1].split()
    self.assertEqual(summary[0], "cases", proc.stdout[-2000:])
    self.assertGreater(int(summary[1]), 0, "no call ran")
    self.assertLess(int(summary[3]), int(summary[1]), "every call failed: the fuzzer tests nothing")


if __name__ == "__main__":
  absltest.main()
