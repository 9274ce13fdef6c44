"""Keeps the benchmarks from rotting: each runs end to end with tiny sizes.

The benchmarks run as subprocesses (as a person runs them) with --quick, and
the tests check what they wrote: every implementation that can run here was
timed, the byte counts follow 3 * N * itemsize, the goals are reported. No
timing is asserted: speed is the benchmark's business, not the tests'.
"""

import importlib.util
import json
import os
import subprocess
import sys
import tempfile

from absl.testing import absltest
from absl.testing import parameterized

import jax_threshold as jt

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_BENCH = os.path.join(_ROOT, "benchmarks")
_TIMEOUT_S = 300


def _load(name):
  spec = importlib.util.spec_from_file_location(name, os.path.join(_BENCH, name + ".py"))
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


def _has(module):
  return importlib.util.find_spec(module) is not None


def _run(out_dir, script, *args):
  """Runs a benchmark script writing into out_dir; returns its stdout."""
  env = dict(os.environ)
  # The subprocess must import the same jax_threshold as this test (installed or checkout).
  pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(jt.__file__)))
  env["PYTHONPATH"] = os.pathsep.join(
    [pkg_parent] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
  )
  proc = subprocess.run(
    [sys.executable, os.path.join(_BENCH, script), "--quick", "--out-dir", out_dir, *args],
    capture_output=True,
    text=True,
    env=env,
    timeout=_TIMEOUT_S,
    check=False,
  )
  if proc.returncode != 0:
    raise AssertionError(
      f"{script} {args} exited {proc.returncode}\n"
      f"stdout:\n{proc.stdout[-4000:]}\nstderr:\n{proc.stderr[-4000:]}"
    )
  return proc.stdout


class _BenchTest(parameterized.TestCase):
  def _tempdir(self):
    # Not absltest's create_tempdir: under pytest its --test_tmpdir flag is unparsed.
    tmp = tempfile.TemporaryDirectory(prefix="bench-smoke-")
    self.addCleanup(tmp.cleanup)
    return tmp.name


@absltest.skipIf("ffi" not in jt.available_implementations(), "the XLA FFI handler is not built")
class CallCostsBenchmarkTest(_BenchTest):
  def test_quick_run_reports_both_ratios(self):
    out_dir = self._tempdir()
    _run(out_dir, "bench_call_costs.py")
    with open(os.path.join(out_dir, "bench_call_costs.json")) as f:
      results = json.load(f)
    for size in ("1", "16"):
      cases = results["per_call"][size]
      self.assertEqual(cases["where"]["ratio"], 1.0)
      for name in (
        "ffi, traced threshold",
        "ffi, constant threshold",
        "ffi, threshold 0 (ReluGrad)",
      ):
        self.assertGreater(cases[name]["us"], 0)
    memory = results["peak_memory"]
    self.assertGreater(memory["same_shape_mib"], 0)
    self.assertAlmostEqual(memory["ratio"], memory["broadcast_mib"] / memory["same_shape_mib"])


class EagerBenchmarkTest(_BenchTest):
  def test_quick_run_reports_every_case(self):
    out_dir = self._tempdir()
    stdout = _run(out_dir, "bench_eager.py", "--sizes", "1,16")
    with open(os.path.join(out_dir, "eager.json")) as f:
      rows = json.load(f)["rows"]
    self.assertEqual([r["size"] for r in rows], [1, 16])
    for r in rows:
      self.assertEqual(r["ratio"]["where"], 1.0)
      self.assertEqual(r["ratio"]["forward_where"], 1.0)
      for case in ("backward", "backward_traced", "forward"):
        self.assertGreater(r["ratio"][case], 0.0)
    self.assertIn("backward and forward <= 1.5 x jnp.where:", stdout)


class ThresholdBackwardBenchmarkTest(_BenchTest):
  def test_quick_run_times_every_available_implementation(self):
    out_dir = self._tempdir()
    stdout = _run(
      out_dir,
      "bench_threshold_backward.py",
      "--dtypes",
      "float32,int8",
      "--sizes",
      "10,11",
      "--donate",
    )
    with open(os.path.join(out_dir, "bench_threshold_backward.json")) as f:
      data = json.load(f)
    rows = data["results"]
    impls = {r["impl"] for r in rows}
    expected = {
      "reference",
      "auto",
      "xla_where",
      "numpy",
      "probe_copy",
      "probe_add",
      "probe_fresh",
      "reference+donate",
    }
    if "ffi" in jt.available_implementations():
      expected |= {"ffi", "ffi+donate", "aclnn_phase2"}
    if _has("torch"):
      expected |= {"torch", "probe_torch_add"}
    self.assertEqual(impls, expected)
    self.assertEqual(
      {(r["dtype"], r["size"]) for r in rows},
      {(d, n) for d in ("float32", "int8") for n in (1024, 2048)},
    )
    itemsize = {"float32": 4, "int8": 1}
    for r in rows:
      self.assertGreater(r["median_s"], 0.0, r)
      self.assertLen(r["samples_s"], data["environment"]["repeats"])
      if not r["impl"].startswith("probe_"):
        self.assertEqual(r["bytes"], 3 * r["size"] * itemsize[r["dtype"]], r)
        self.assertIsNotNone(r["ratio_vs_reference"], r)
    bench = _load("bench_threshold_backward")
    self.assertEqual([g["goal"] for g in data["goals"]], [g[0] for g in bench.GOALS])
    # Only 2^10 / 2^11 ran: the 2^10 float32 goal is evaluated, the others are N/A.
    for goal in data["goals"]:
      self.assertIn(goal["status"], ("PASS", "FAIL", "N/A"))
      self.assertEqual(
        goal["status"] != "N/A", goal["goal"] == "ffi_vs_reference_2^10" and "ffi" in impls, goal
      )
    self.assertIn("speed goals (this run", stdout)
    self.assertIn("vs ref", stdout)
    if _has("torch"):
      self.assertIn("separate process, torch defaults", data["environment"]["torch_process"])
    if _has("matplotlib"):
      png = os.path.join(out_dir, "bench_threshold_backward.png")
      with open(png, "rb") as f:
        self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

  def test_bfloat16_runs(self):
    out_dir = self._tempdir()
    _run(
      out_dir,
      "bench_threshold_backward.py",
      "--dtypes",
      "bfloat16",
      "--sizes",
      "10",
      "--impls",
      "reference,xla_where,numpy",
      "--no-plot",
    )
    with open(os.path.join(out_dir, "bench_threshold_backward.json")) as f:
      rows = json.load(f)["results"]
    self.assertEqual({r["impl"] for r in rows}, {"reference", "xla_where", "numpy"})
    self.assertFalse(os.path.exists(os.path.join(out_dir, "bench_threshold_backward.png")))


class FlaxStepBenchmarkTest(_BenchTest):
  @parameterized.parameters("linen", "nnx")
  def test_quick_run(self, api):
    if not _has("flax") or not _has("optax"):
      self.skipTest("needs flax and optax")
    out_dir = self._tempdir()
    stdout = _run(out_dir, "bench_flax_step.py", "--api", api)
    with open(os.path.join(out_dir, "bench_flax_step.json")) as f:
      data = json.load(f)
    names = [r["activation"] for r in data["results"]]
    expected = ["relu", "threshold:reference", "threshold:auto"]
    if "ffi" in jt.available_implementations():
      expected.insert(1, "threshold:ffi")
    self.assertEqual(names, expected)
    # Same function from the same parameters: the first losses agree.
    losses = data["environment"]["first_step_losses"]
    self.assertLess(max(losses.values()) - min(losses.values()), 1e-4)
    self.assertEqual(data["goals"][0]["goal"], "flax_auto_vs_relu")
    self.assertIn(data["goals"][0]["status"], ("PASS", "FAIL"))
    self.assertIn("vs relu", stdout)


class ActivationMemoryBenchmarkTest(_BenchTest):
  def test_quick_run_measures_every_activation_with_and_without_checkpoint(self):
    out_dir = self._tempdir()
    stdout = _run(out_dir, "bench_activation_memory.py")
    with open(os.path.join(out_dir, "bench_activation_memory.json")) as f:
      rows = json.load(f)["results"]
    names = ["relu", "where", "threshold:auto", "threshold:ffi", "threshold:reference"]
    if "ffi" not in jt.available_implementations():
      names.remove("threshold:ffi")
    self.assertEqual(
      [(r["activation"], r["checkpoint"]) for r in rows],
      [(n, c) for c in (False, True) for n in names],
    )
    for r in rows:
      self.assertTrue(r["bits_equal_where"], r)  # the same gradient, bit for bit
      self.assertGreaterEqual(r["temp_size_in_bytes"], 0, r)
      if r["activation"] == "relu":
        self.assertEqual(r["ratio_vs_relu"], 1.0)
    self.assertIn("compiled temp memory", stdout)


class BatchedThresholdBenchmarkTest(_BenchTest):
  def test_quick_run_checks_every_path_against_the_reference(self):
    if "ffi" not in jt.available_implementations():
      self.skipTest("needs the custom call")
    out_dir = self._tempdir()
    stdout = _run(out_dir, "bench_batched_threshold.py", "--dtype", "bfloat16")
    with open(os.path.join(out_dir, "bench_batched_threshold.json")) as f:
      data = json.load(f)
    self.assertEqual(
      [r["path"] for r in data["results"]], ["reference", "ffi", "ffi:per-threshold"]
    )
    for r in data["results"]:
      self.assertTrue(r["bits_equal"], r)
      self.assertGreater(r["median_ms"], 0.0, r)
      self.assertGreater(r["peak_mib"], 0.0, r)
    self.assertIn("/ reference", stdout)


class GoalLogicTest(parameterized.TestCase):
  """The pass/fail arithmetic, on made-up rows (no timing involved)."""

  _ITEMSIZE = {"float32": 4, "bfloat16": 2, "int8": 1}

  def _rows(self, gbps):
    """gbps: {(impl, dtype, size): GB/s} -> result rows."""
    rows = []
    for (impl, dtype, size), rate in gbps.items():
      nbytes = 3 * size * self._ITEMSIZE[dtype]
      rows.append(
        {
          "dtype": dtype,
          "size": size,
          "impl": impl,
          "bytes": nbytes,
          "gbps": rate,
          "median_s": nbytes / rate / 1e9,
        }
      )
    return rows

  def _goal_rows(self, bench, margin):
    """Rows for every goal, each `margin` times what the goal asks."""
    gbps = {}
    for _, dtype, impl, baseline, size, at_least in bench.GOALS:
      if baseline == "GB/s":
        gbps[(impl, dtype, size)] = at_least * margin
      else:
        gbps[(impl, dtype, size)] = 10.0  # shared by the goals against torch and reference
        gbps[(baseline, dtype, size)] = 10.0 / (at_least * margin)
    return self._rows(gbps)

  def test_all_goals_pass(self):
    bench = _load("bench_threshold_backward")
    goals = bench.evaluate_goals(self._goal_rows(bench, 1.02))
    self.assertEqual([g["status"] for g in goals], ["PASS"] * len(bench.GOALS))

  def test_each_goal_can_fail(self):
    bench = _load("bench_threshold_backward")
    goals = bench.evaluate_goals(self._goal_rows(bench, 0.98))
    self.assertEqual([g["status"] for g in goals], ["FAIL"] * len(bench.GOALS))

  def test_missing_ffi_is_not_applicable(self):
    bench = _load("bench_threshold_backward")
    rows = [r for r in self._goal_rows(bench, 2.0) if r["impl"] not in ("ffi", "aclnn_phase2")]
    self.assertEqual({g["status"] for g in bench.evaluate_goals(rows)}, {"N/A"})

  def test_other_dtypes_do_not_count(self):
    bench = _load("bench_threshold_backward")
    rows = self._rows({("ffi", "int8", 1 << 20): 99.0, ("reference", "int8", 1 << 20): 1.0})
    by = {g["goal"]: g for g in bench.evaluate_goals(rows)}
    self.assertEqual(by["ffi_vs_reference_2^20"]["status"], "N/A")
    self.assertEqual(by["int8_ffi_vs_reference_2^20"]["status"], "PASS")

  def test_goal_reports_the_same_run_ceiling(self):
    bench = _load("bench_threshold_backward")
    rows = self._rows(
      {
        ("ffi", "float32", 1 << 20): 100.0,
        ("torch", "float32", 1 << 20): 150.0,
        ("probe_add", "float32", 1 << 20): 90.0,
        ("probe_torch_add", "float32", 1 << 20): 140.0,
      }
    )
    goal = {g["goal"]: g for g in bench.evaluate_goals(rows)}["ffi_vs_torch_2^20"]
    self.assertEqual(goal["status"], "FAIL")
    self.assertEqual(goal["ceiling"], {"probe": "probe_torch_add", "gbps": 140.0})
    self.assertAlmostEqual(goal["needs_gbps"], 150.0)
    self.assertIn("above this run's ceiling", bench.format_goals([goal]))
    # The faster probe is the ceiling, whichever it is.
    rows[2]["gbps"] = 160.0
    goal = {g["goal"]: g for g in bench.evaluate_goals(rows)}["ffi_vs_torch_2^20"]
    self.assertEqual(goal["ceiling"], {"probe": "probe_add", "gbps": 160.0})
    self.assertNotIn("above this run's ceiling", bench.format_goals([goal]))

  def test_ratios(self):
    bench = _load("bench_threshold_backward")
    rows = self._rows(
      {
        ("ffi", "float32", 1024): 3.0,
        ("reference", "float32", 1024): 2.0,
        ("torch", "float32", 1024): 6.0,
      }
    )
    bench.add_ratios(rows)
    by = {r["impl"]: r for r in rows}
    self.assertAlmostEqual(by["ffi"]["ratio_vs_reference"], 1.5)
    self.assertAlmostEqual(by["ffi"]["ratio_vs_torch"], 0.5)
    self.assertAlmostEqual(by["torch"]["ratio_vs_torch"], 1.0)

  def test_paired_ratio_cancels_a_shared_load_burst(self):
    bench = _load("bench_threshold_backward")
    # Every other repetition both run 10x slower (another process's burst);
    # ffi is 1.5x faster in each repetition, which the medians alone hide.
    load = [1.0, 10.0, 1.0, 10.0, 10.0]
    ffi = {"samples_s": [2.0 * k for k in load], "median_s": 20.0}
    ref = {"samples_s": [3.0 * k for k in load], "median_s": 30.0}
    ratio, how = bench.time_ratio(ref, ffi)
    self.assertAlmostEqual(ratio, 1.5)
    self.assertIn("paired", how)
    ref["samples_s"] = ref["samples_s"][:3]  # unequal counts: ratio of medians
    self.assertEqual(bench.time_ratio(ref, ffi)[1], "ratio of medians")

  def test_flax_goal(self):
    flax_bench = _load("bench_flax_step")
    rows = [
      {"activation": "relu", "median_s": 1.0},
      {"activation": "threshold:auto", "median_s": 1.06},
    ]
    self.assertEqual(flax_bench.evaluate_goals(rows)[0]["status"], "FAIL")
    rows[1]["median_s"] = 1.04
    self.assertEqual(flax_bench.evaluate_goals(rows)[0]["status"], "PASS")

  @parameterized.parameters(
    ("10,20,24", [1 << 10, 1 << 20, 1 << 24]),
    ("10-14:2", [1 << 10, 1 << 12, 1 << 14]),
    ("12-13", [1 << 12, 1 << 13]),
    ("1000", [1000]),
  )
  def test_parse_sizes(self, text, sizes):
    self.assertEqual(_load("bench_threshold_backward").parse_sizes(text), sizes)


if __name__ == "__main__":
  absltest.main()
