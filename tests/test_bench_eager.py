"""Keeps benchmarks/bench_eager.py from rotting: a --quick run end to end (no timing is asserted;
speed is the benchmark's business)."""

import json
import os
import subprocess
import sys
import tempfile

from absl.testing import absltest

import jax_threshold as jt

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class EagerBenchmarkTest(absltest.TestCase):
  def test_quick_run_reports_every_case(self):
    env = dict(os.environ)
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(jt.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(
      [pkg_parent] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    )
    with tempfile.TemporaryDirectory() as out_dir:
      proc = subprocess.run(
        [
          sys.executable,
          os.path.join(_ROOT, "benchmarks", "bench_eager.py"),
          "--quick",
          "--sizes",
          "1,16",
          "--out-dir",
          out_dir,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
      )
      self.assertEqual(proc.returncode, 0, proc.stderr[-4000:])
      with open(os.path.join(out_dir, "eager.json")) as f:
        rows = json.load(f)["rows"]
    self.assertEqual([r["size"] for r in rows], [1, 16])
    for r in rows:
      self.assertEqual(r["ratio"]["where"], 1.0)
      self.assertEqual(r["ratio"]["forward_where"], 1.0)
      for case in ("backward", "backward_traced", "forward"):
        self.assertGreater(r["ratio"][case], 0.0)
    self.assertIn("backward and forward <= 1.5 x jnp.where:", proc.stdout)


if __name__ == "__main__":
  absltest.main()
