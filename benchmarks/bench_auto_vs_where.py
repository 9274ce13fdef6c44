#!/usr/bin/env python3
"""The default path against plain XLA: `threshold_backward` ("auto") over `jnp.where`.

On CPU "auto" is the reference lowering, the one users run. Both sides are one fused loop; the
reference's compare must also be exact for subnormal x in every flush mode. This benchmark times,
in one process and interleaved (every repetition times each case once, in a rotated order, each
call returning a fresh output), for each dtype, size and threshold:

  where       jax.jit(lambda g, x: jnp.where(x > t, g, 0))           the baseline
  auto        jax.jit(lambda g, x: jt.threshold_backward(g, x, t))     a static threshold
  auto_traced the same with t a jitted argument (the form that cannot fold at compile time)
  bits_form   the static threshold through the integer range check alone
              (_threshold.greater_by_bits), for float x: what the float compare saves
  forward     jt.threshold(x, t, 0) over jnp.where(x > t, x, 0): the forward activation, whose
              compare is the named step `threshold_mask`

and reports, per case, the median over repetitions of the same-repetition ratio
time(where) / time(case): 1.0 is as fast as jnp.where, above is faster; auto_best is the ratio of
the two fastest samples (what each costs when other load leaves it alone). Every case is first
checked to give jnp.where's bits. "same" says whether auto's fused loop has exactly the ops of
jnp.where's (then any ratio away from 1 is load on the machine). The goal is auto >= 0.95.

    python benchmarks/bench_auto_vs_where.py                    # 2^10..2^24, float32/bfloat16/int8
    python benchmarks/bench_auto_vs_where.py --sizes 20-24 --thresholds 0.5,0
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import json
import os
import re
import statistics
import sys
import time

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(_HERE)
GOAL = 0.95
CASES = ("where", "auto", "auto_best", "auto_traced", "bits_form", "forward")
# Each case's baseline: the backward cases against jnp.where(x > t, g, 0), the forward
# jt.threshold(x, t, 0) against jnp.where(x > t, x, 0).
BASELINE = {"forward": "forward_where", "forward_where": "forward_where"}


def _import():
  try:
    import jax_threshold  # pylint: disable=g-import-not-at-top
  except ImportError:
    sys.path.insert(0, _ROOT)
    import jax_threshold  # pylint: disable=g-import-not-at-top
  import jax  # pylint: disable=g-import-not-at-top

  return jax, jax_threshold


def _parse_sizes(text):
  if "-" in text:
    lo, hi = (int(v) for v in text.split("-"))
    return [1 << e for e in range(lo, hi + 1, 2)]
  return [1 << int(v) for v in text.split(",")]


def _functions(jax, jt, dtype, threshold):
  jnp, lax = jax.numpy, jax.lax
  threshold_module = importlib.import_module("jax_threshold._threshold")
  zero = jnp.zeros((), dtype)
  fns = {
    "where": jax.jit(lambda g, x: jnp.where(x > threshold, g, zero)),
    "auto": jax.jit(lambda g, x: jt.threshold_backward(g, x, threshold)),
  }
  fns["forward_where"] = jax.jit(lambda g, x: jnp.where(x > threshold, x, zero))
  fns["forward"] = jax.jit(lambda g, x: jt.threshold(x, threshold, 0))
  traced = jax.jit(lambda g, x, t: jt.threshold_backward(g, x, t))
  t_traced = jnp.float32(threshold)
  fns["auto_traced"] = lambda g, x: traced(g, x, t_traced)
  floating = np.dtype(dtype).kind == "f" or np.dtype(dtype).name == "bfloat16"
  if floating and hasattr(threshold_module, "greater_by_bits"):
    t_operand, _ = threshold_module.operand(threshold, dtype)

    def bits_form(g, x):
      mask = threshold_module.greater_by_bits(threshold_module.to_float32(x), t_operand)
      return lax.select(mask, g, jnp.zeros_like(g))

    fns["bits_form"] = jax.jit(bits_form)
  return fns


def _fused_ops(fn, g, x):
  """The ops of the fused computations of fn's optimized HLO (constants left out)."""
  text = fn.lower(g, x).compile().as_text().split("ENTRY")[0]
  ops = re.findall(r"^\s*(?:ROOT )?%\S+ = \S+ ([a-z-]+)\(", text, re.M)
  return sorted(op for op in ops if op not in ("parameter", "constant", "broadcast"))


def _time(fn, g, x, calls):
  start = time.perf_counter()
  for _ in range(calls):
    out = fn(g, x)
  out.block_until_ready()
  return (time.perf_counter() - start) / calls


def run_case(jax, jt, dtype, size, threshold, repetitions, min_sample_s):
  """Returns {case: median same-repetition ratio where/case}, {case: median seconds per call}."""
  rng = np.random.default_rng(size)
  x = jax.device_put(
    rng.standard_normal(size).astype(np.float32).astype(dtype)
    if np.dtype(dtype).kind != "i"
    else rng.integers(-100, 100, size).astype(dtype)
  )
  g = jax.device_put(
    rng.standard_normal(size).astype(np.float32).astype(dtype)
    if np.dtype(dtype).kind != "i"
    else rng.integers(-100, 100, size).astype(dtype)
  )
  fns = _functions(jax, jt, dtype, threshold)
  for name, fn in fns.items():  # compile, warm up, and check every case computes the same
    out = np.asarray(fn(g, x))
    expected = np.asarray(fns[BASELINE.get(name, "where")](g, x))
    if not np.array_equal(out.view(np.uint8), expected.view(np.uint8)):
      raise AssertionError(f"{name} differs from jnp.where at {dtype} 2^{size.bit_length() - 1}")
  single = _time(fns["where"], g, x, 3)
  calls = max(1, int(min_sample_s / max(single, 1e-7)))
  names = list(fns)
  samples = {n: [] for n in names}
  for rep in range(repetitions):
    order = names[rep % len(names) :] + names[: rep % len(names)]
    for name in order:
      samples[name].append(_time(fns[name], g, x, calls))
  ratios = {
    n: statistics.median(w / s for w, s in zip(samples[BASELINE.get(n, "where")], samples[n]))
    for n in names
  }
  del ratios["forward_where"]
  # The ratio of the fastest samples: what each costs when the machine leaves it alone.
  ratios["auto_best"] = min(samples["where"]) / min(samples["auto"])
  seconds = {n: statistics.median(samples[n]) for n in names}
  same_program = _fused_ops(fns["auto"], g, x) == _fused_ops(fns["where"], g, x)
  return ratios, seconds, same_program


def main(argv=None):
  p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
  p.add_argument("--sizes", default="10-24", help="log2 sizes: 'lo-hi' (even steps) or 'a,b,c'")
  p.add_argument("--dtypes", default="float32,bfloat16,int8")
  p.add_argument("--thresholds", default="0.5,0.0")
  p.add_argument("--repetitions", type=int, default=15)
  p.add_argument("--min-sample-s", type=float, default=0.02)
  p.add_argument("--quick", action="store_true", help="tiny sizes, few repetitions (smoke test)")
  p.add_argument("--out-dir", default=os.path.join(_HERE, "results"))
  args = p.parse_args(argv)
  if args.quick:
    args.sizes, args.repetitions, args.min_sample_s = "10,12", 3, 0.001
  jax, jt = _import()
  import ml_dtypes  # pylint: disable=g-import-not-at-top

  dtypes = {"bfloat16": ml_dtypes.bfloat16}
  rows = []
  print(
    f"time(where) / time(case), same-run median of {args.repetitions} interleaved "
    f"repetitions; goal auto >= {GOAL}"
  )
  print(
    f"{'dtype':9} {'size':>5} {'t':>5} "
    + " ".join(f"{c:>11}" for c in CASES)
    + f" {'where us':>10} {'same':>5}"
  )
  for dtype_name in args.dtypes.split(","):
    dtype = dtypes.get(dtype_name, np.dtype(dtype_name))
    for threshold in (float(t) for t in args.thresholds.split(",")):
      for size in _parse_sizes(args.sizes):
        ratios, seconds, same = run_case(
          jax, jt, dtype, size, threshold, args.repetitions, args.min_sample_s
        )
        rows.append(
          {
            "dtype": dtype_name,
            "size": size,
            "threshold": threshold,
            "ratio": ratios,
            "seconds": seconds,
            "same_fused_ops_as_where": same,
            "goal_met": ratios["auto"] >= GOAL,
          }
        )
        cells = " ".join(f"{ratios[c]:>11.3f}" if c in ratios else f"{'-':>11}" for c in CASES)
        print(
          f"{dtype_name:9} 2^{size.bit_length() - 1:<3} {threshold:>5g} {cells} "
          f"{seconds['where'] * 1e6:>10.1f} {'yes' if same else 'no':>5}",
          flush=True,
        )
  met = sum(r["goal_met"] for r in rows)
  print(f"auto >= {GOAL} x where: {met} of {len(rows)}")
  os.makedirs(args.out_dir, exist_ok=True)
  path = os.path.join(args.out_dir, "auto_vs_where.json")
  with open(path, "w") as f:
    json.dump(
      {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        "jax": jax.__version__,
        "goal": GOAL,
        "rows": rows,
      },
      f,
      indent=1,
    )
  print(f"wrote {path}")


if __name__ == "__main__":
  main()
