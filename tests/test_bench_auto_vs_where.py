"""Keeps benchmarks/bench_auto_vs_where.py from rotting: a --quick run end to end (no timing is
asserted; speed is the benchmark's business)."""

import json
import os
import subprocess
import sys
import tempfile

from absl.testing import absltest

import jax_threshold as jt

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class AutoVsWhereBenchmarkTest(absltest.TestCase):
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
          os.path.join(_ROOT, "benchmarks", "bench_auto_vs_where.py"),
          "--quick",
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
      with open(os.path.join(out_dir, "auto_vs_where.json")) as f:
        rows = json.load(f)["rows"]
    self.assertEqual(
      {(r["dtype"], r["threshold"], r["size"]) for r in rows},
      {
        (d, t, n) for d in ("float32", "bfloat16", "int8") for t in (0.5, 0.0) for n in (1024, 4096)
      },
    )
    for r in rows:
      self.assertEqual(r["ratio"]["where"], 1.0)
      self.assertGreater(r["ratio"]["auto"], 0.0)
      self.assertEqual("bits_form" in r["ratio"], r["dtype"] != "int8", r)
    self.assertIn("auto >= 0.95 x where:", proc.stdout)


if __name__ == "__main__":
  absltest.main()
