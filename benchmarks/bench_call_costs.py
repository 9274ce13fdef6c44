"""What one custom call costs beside the plain-JAX spelling (docs/behaviour.md §8).

Two measurements, each a ratio taken in one run:

  per-call: a jitted "ffi" call at 1 and 16 float32 elements (threshold a traced operand and a
    constant) against a jitted `jnp.where`, interleaved in one process: each round times every
    function over the same number of calls, in turn; the ratio is the median over rounds of
    (ffi time / where time) in that round. Goal: <= 1.2.

  peak memory: one "ffi" call at 4096x4096 float32 whose grad_output has shape (1, 4096), against
    the same call with grad_output of the full shape. Each case runs in a fresh child process
    (so one case's pages do not count for the other); the child reports how far its resident set
    grows over the call (after inputs exist and the function is compiled; see _child_peak). The ratio is broadcast /
    same-shape. Goal: <= 1.1.

Usage: python benchmarks/bench_call_costs.py [--quick] [--out FILE.json] [--out-dir DIR]
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

import jax
import jax.numpy as jnp

import jax_threshold as jt

_GOALS = {"per_call": 1.2, "peak_memory": 1.1}


def _time_calls(fn, args, calls):
  out = None
  start = time.perf_counter()
  for _ in range(calls):
    out = fn(*args)
  out.block_until_ready()
  return (time.perf_counter() - start) / calls


def per_call(sizes, rounds, calls):
  """{size: {case: {"us": median µs per call, "ratio": median ratio to where}}}."""
  results = {}
  for n in sizes:
    g = jnp.linspace(-1, 1, n, dtype=jnp.float32)
    x = jnp.linspace(1, -1, n, dtype=jnp.float32)
    t = jnp.float32(0.25)
    cases = {
      "ffi, traced threshold": (
        jax.jit(lambda g, x, t: jt.threshold_backward(g, x, t, implementation="ffi")),
        (g, x, t),
      ),
      "ffi, constant threshold": (
        jax.jit(lambda g, x: jt.threshold_backward(g, x, 0.25, implementation="ffi")),
        (g, x),
      ),
      "ffi, threshold 0 (ReluGrad)": (
        jax.jit(lambda g, x: jt.threshold_backward(g, x, 0.0, implementation="ffi")),
        (g, x),
      ),
      "where": (jax.jit(lambda g, x, t: jnp.where(x > t, g, 0)), (g, x, t)),
    }
    for fn, args in cases.values():
      _time_calls(fn, args, 10)  # compile and warm
    times = {name: [] for name in cases}
    for _ in range(rounds):
      for name, (fn, args) in cases.items():
        times[name].append(_time_calls(fn, args, calls))
    results[n] = {
      name: {
        "us": statistics.median(ts) * 1e6,
        "ratio": statistics.median(a / b for a, b in zip(ts, times["where"])),
      }
      for name, ts in times.items()
    }
  return results


def _status_kib(field):
  with open("/proc/self/status") as f:
    for line in f:
      if line.startswith(field + ":"):
        return int(line.split()[1])
  raise KeyError(field)


def _child_peak(grad_rows, n):
  """In this process: MiB the resident set grows to over one "ffi" call.

  Linux: the peak (VmHWM) is reset just before the call (/proc/self/clear_refs), so compiling's
  own peak does not hide the call's; elsewhere ru_maxrss's growth (a lower bound).
  """
  g = jnp.ones((grad_rows, n), jnp.float32)
  x = jnp.ones((n, n), jnp.float32)
  f = jax.jit(lambda g, x: jt.threshold_backward(g, x, 0.25, implementation="ffi"))
  compiled = f.lower(g, x).compile()
  jax.block_until_ready((g, x))
  try:
    with open("/proc/self/clear_refs", "w") as refs:
      refs.write("5")
    before = _status_kib("VmRSS")
    compiled(g, x).block_until_ready()
    return (_status_kib("VmHWM") - before) / 1024
  except OSError:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    compiled(g, x).block_until_ready()
    return (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024


def peak_memory(n):
  """{"broadcast_mib", "same_shape_mib", "ratio"}: each case in its own child process."""
  mib = {}
  for name, rows in (("broadcast_mib", 1), ("same_shape_mib", n)):
    code = f"import bench_call_costs as b; print(b._child_peak({rows}, {n}))"
    # Run from benchmarks/, as this script runs: the checkout's package never shadows the
    # installed one there.
    out = subprocess.run(
      [sys.executable, "-c", code],
      cwd=os.path.dirname(os.path.abspath(__file__)),
      check=True,
      capture_output=True,
      text=True,
    ).stdout
    mib[name] = float(out.strip().splitlines()[-1])
  same = mib["same_shape_mib"]
  mib["ratio"] = mib["broadcast_mib"] / same if same > 0 else float("nan")
  return mib


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--quick", action="store_true", help="tiny sizes and few rounds")
  parser.add_argument("--out", help="write the results as JSON here")
  parser.add_argument("--out-dir", help="write the results as bench_call_costs.json in this folder")
  args = parser.parse_args()
  rounds, calls, n = (3, 50, 1024) if args.quick else (15, 2000, 4096)
  results = {
    "jax": jax.__version__,
    "per_call": per_call((1, 16), rounds, calls),
    "peak_memory": peak_memory(n),
    "goals": _GOALS,
  }
  for size, cases in results["per_call"].items():
    for name, r in cases.items():
      print(f"{size:>3} elements  {name:<28} {r['us']:8.2f} µs  {r['ratio']:.2f}x where")
  m = results["peak_memory"]
  print(
    f"peak memory {n}x{n} float32: grad_output (1, {n}) +{m['broadcast_mib']:.1f} MiB, "
    f"same shape +{m['same_shape_mib']:.1f} MiB: {m['ratio']:.2f}x "
    f"(goal <= {_GOALS['peak_memory']})"
  )
  paths = [args.out] if args.out else []
  if args.out_dir:
    os.makedirs(args.out_dir, exist_ok=True)
    paths.append(os.path.join(args.out_dir, "bench_call_costs.json"))
  for path in paths:
    with open(path, "w") as f:
      json.dump(results, f, indent=1)


if __name__ == "__main__":
  main()
