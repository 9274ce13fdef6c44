#!/usr/bin/env python3
"""Un-jitted calls: what one eager `threshold_backward` / `threshold` costs beside `jnp.where`.

At small sizes an un-jitted call is all dispatch: what Python does before the primitive runs, and
how the call reaches the compiled computation. This benchmark times, in one process and
interleaved (every round times each case once, in a rotated order), for each size:

  where            jnp.where(x > t, g, 0), un-jitted: the baseline of the backward
  backward         jt.threshold_backward(g, x, t), un-jitted, t a Python float
  backward_traced  the same with t a 0-d float32 jax.Array
  forward_where    jnp.where(x > t, x, 0), un-jitted: the baseline of the forward
  forward          jt.threshold(x, t, 0.0), un-jitted

g and x are float32 jax.Arrays already on the device. Each case's time is a round's mean time
per call (calls back to back, the last one blocked on); the reported number is the median over
rounds of the same-round ratio time(case) / time(baseline): 1.0 costs what jnp.where costs, above
is slower. The goal is <= 1.5 for backward and forward. Every case is first checked to give the
baseline's bits.

    python benchmarks/bench_eager.py                  # sizes 1, 16, 1024
    python benchmarks/bench_eager.py --sizes 1,1024 --rounds 41
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys
import time

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(_HERE)
GOAL = 1.5
THRESHOLD = 0.5
# Each case's baseline.
BASELINE = {
  "where": "where",
  "backward": "where",
  "backward_traced": "where",
  "forward_where": "forward_where",
  "forward": "forward_where",
}


def _import():
  try:
    import jax_threshold  # pylint: disable=g-import-not-at-top
  except ImportError:
    sys.path.insert(0, _ROOT)
    import jax_threshold  # pylint: disable=g-import-not-at-top
  import jax  # pylint: disable=g-import-not-at-top

  return jax, jax_threshold


def _functions(jax, jt):
  jnp = jax.numpy
  t_array = jnp.float32(THRESHOLD)
  return {
    "where": lambda g, x: jnp.where(x > THRESHOLD, g, 0),
    "backward": lambda g, x: jt.threshold_backward(g, x, THRESHOLD),
    "backward_traced": lambda g, x: jt.threshold_backward(g, x, t_array),
    "forward_where": lambda g, x: jnp.where(x > THRESHOLD, x, 0),
    "forward": lambda g, x: jt.threshold(x, THRESHOLD, 0.0),
  }


def _time(fn, g, x, calls):
  start = time.perf_counter()
  for _ in range(calls):
    out = fn(g, x)
  out.block_until_ready()
  return (time.perf_counter() - start) / calls


def run_size(jax, jt, size, rounds, calls):
  """{case: median same-round ratio case/baseline}, {case: median seconds per call}."""
  rng = np.random.default_rng(size)
  g = jax.device_put(rng.standard_normal(size).astype(np.float32))
  x = jax.device_put((rng.standard_normal(size) + THRESHOLD).astype(np.float32))
  fns = _functions(jax, jt)
  for name, fn in fns.items():  # warm every cache, and check every case computes the same
    for _ in range(3):
      out = np.asarray(fn(g, x))
    expected = np.asarray(fns[BASELINE[name]](g, x))
    if not np.array_equal(out.view(np.uint8), expected.view(np.uint8)):
      raise AssertionError(f"{name} differs from its jnp.where baseline at size {size}")
  names = list(fns)
  samples = {n: [] for n in names}
  for r in range(rounds):
    for name in names[r % len(names) :] + names[: r % len(names)]:
      samples[name].append(_time(fns[name], g, x, calls))
  ratios = {
    n: statistics.median(s / b for s, b in zip(samples[n], samples[BASELINE[n]])) for n in names
  }
  seconds = {n: statistics.median(samples[n]) for n in names}
  return ratios, seconds


def main(argv=None):
  p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
  p.add_argument("--sizes", default="1,16,1024", help="element counts, comma-separated")
  p.add_argument("--rounds", type=int, default=21)
  p.add_argument("--calls", type=int, default=200, help="calls per case and round")
  p.add_argument("--quick", action="store_true", help="few rounds and calls (smoke test)")
  p.add_argument("--out-dir", default=os.path.join(_HERE, "results"))
  args = p.parse_args(argv)
  if args.quick:
    args.rounds, args.calls = 3, 5
  jax, jt = _import()
  load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
  print(
    f"un-jitted calls, float32; time(case) / time(jnp.where), same-round median of "
    f"{args.rounds} interleaved rounds of {args.calls} calls; goal <= {GOAL}; "
    f"load average {load:.1f}"
  )
  names = list(BASELINE)
  print(f"{'size':>6} " + " ".join(f"{n:>15}" for n in names) + f" {'where us':>9}")
  rows = []
  for size in (int(s) for s in args.sizes.split(",")):
    ratios, seconds = run_size(jax, jt, size, args.rounds, args.calls)
    met = ratios["backward"] <= GOAL and ratios["forward"] <= GOAL
    rows.append({"size": size, "ratio": ratios, "seconds": seconds, "goal_met": met})
    print(
      f"{size:>6} "
      + " ".join(f"{ratios[n]:>15.3f}" for n in names)
      + f" {seconds['where'] * 1e6:>9.1f}",
      flush=True,
    )
  met = sum(r["goal_met"] for r in rows)
  print(f"backward and forward <= {GOAL} x jnp.where: {met} of {len(rows)} sizes")
  os.makedirs(args.out_dir, exist_ok=True)
  path = os.path.join(args.out_dir, "eager.json")
  with open(path, "w") as f:
    json.dump(
      {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        "jax": jax.__version__,
        "goal": GOAL,
        "load_average": load,
        "rows": rows,
      },
      f,
      indent=1,
    )
  print(f"wrote {path}")


if __name__ == "__main__":
  main()
