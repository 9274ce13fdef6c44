#!/usr/bin/env python3
"""vmap over many thresholds on a small x: time and peak memory of each path.

    f = jax.jit(jax.vmap(lambda t: jt.threshold_backward(x, x, t, implementation=impl)))

with x of 3 float32 elements and 10^6 thresholds. Three ways are run, each in a process of its
own for its peak memory, and all in one process, interleaved, for the times:
  reference            the jnp lowering (XLA's fused select)
  ffi                  the custom call as lowered today: launched along the batch axis
                       (jax_threshold/ffi.py)
  ffi:per-threshold    the custom call with that rewrite switched off: one shared phase-one
                       plan, one kernel block per threshold (cpp/xla_ffi/ffi_shared_plan.*)
Times are medians of single calls after compiling; "peak RSS" is the process's peak resident
memory (JAX itself takes about 220 MiB of it). Every path's result is checked bit for bit against
the reference's, computed in a process of its own.

    python benchmarks/bench_batched_threshold.py
    python benchmarks/bench_batched_threshold.py --thresholds 100000 --elements 8 --dtype bfloat16

Writes benchmarks/results/bench_batched_threshold.json (--out-dir to change).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import textwrap

PATHS = ("reference", "ffi", "ffi:per-threshold")

_CHILD = textwrap.dedent("""
    import hashlib, json, resource, statistics, sys, time
    import jax, jax.numpy as jnp, numpy as np
    import jax_threshold as jt
    from jax_threshold import ffi
    paths, n_thresholds, n_elements, dtype, repeats = sys.argv[1:6]
    paths, repeats = paths.split(","), int(repeats)
    dtype = jnp.dtype(dtype)
    x = jnp.linspace(0.5, 2.5, int(n_elements)).astype(dtype)
    ts = jnp.linspace(-1, 3, int(n_thresholds), dtype=jnp.float32)
    fns = {}
    for path in paths:
      # ":per-threshold": the rewrite never applies (it is decided when lowering).
      ffi.MAX_ELEMENTS_PER_THRESHOLD = 0 if path.endswith(":per-threshold") else 256
      f = jax.jit(jax.vmap(lambda t, impl=path.split(":")[0]: jt.threshold_backward(
          x, x, t, implementation=impl)))
      fns[path] = f.lower(ts).compile()
    ffi.MAX_ELEMENTS_PER_THRESHOLD = 256
    digests = {p: hashlib.sha256(np.asarray(f(ts)).tobytes()).hexdigest() for p, f in fns.items()}
    times = {p: [] for p in paths}
    for r in range(repeats):  # interleaved, in a rotated order
      for p in paths[r % len(paths):] + paths[:r % len(paths)]:
        if p.endswith(":per-threshold") and r % 5:
          continue  # the slow path: every fifth repetition
        t0 = time.perf_counter()
        fns[p](ts).block_until_ready()
        times[p].append(time.perf_counter() - t0)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({p: dict(path=p, median_ms=statistics.median(times[p]) * 1e3,
                              min_ms=min(times[p]) * 1e3, peak_mib=peak / 1024,
                              digest=digests[p]) for p in paths}))
""")


def parse_args(argv=None):
  p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  p.add_argument("--thresholds", type=int, default=1_000_000)
  p.add_argument("--elements", type=int, default=3)
  p.add_argument("--dtype", default="float32")
  p.add_argument("--repeats", type=int, default=21)
  p.add_argument(
    "--out-dir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
  )
  p.add_argument(
    "--quick",
    action="store_true",
    help="a smoke run (2000 thresholds, 5 repetitions), not a measurement",
  )
  args = p.parse_args(argv)
  if args.quick:
    args.thresholds, args.repeats = 2000, 5
  return args


def run(paths, args) -> dict:
  proc = subprocess.run(
    [
      sys.executable,
      "-c",
      _CHILD,
      ",".join(paths),
      str(args.thresholds),
      str(args.elements),
      args.dtype,
      str(args.repeats),
    ],
    # Not from the checkout's root, where `-c` would import the source tree's jax_threshold
    # (no compiled extension) instead of the one this process uses.
    capture_output=True,
    text=True,
    timeout=600,
    check=False,
    cwd=os.path.dirname(os.path.abspath(__file__)),
  )
  if proc.returncode != 0:
    raise RuntimeError(f"{paths} failed:\n{proc.stderr[-3000:]}")
  return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
  args = parse_args(argv)
  print(
    f"vmap over {args.thresholds} thresholds, x of {args.elements} {args.dtype} elements "
    "(each path in its own process)"
  )
  timed = run(PATHS, args)  # every path in one process, interleaved: the times and ratios
  results = [timed[p] for p in PATHS]
  for r in results:  # each path alone in a process: its peak memory
    r["peak_mib"] = run([r["path"]], args)[r["path"]]["peak_mib"]
  reference = results[0]
  for r in results:
    r["bits_equal"] = r["digest"] == reference["digest"]
  print(f"{'path':<20}{'median':>12}{'min':>12}{'/ reference':>13}{'peak RSS':>12}  bits")
  for r in results:
    print(
      f"{r['path']:<20}{r['median_ms']:>10.2f}ms{r['min_ms']:>10.2f}ms"
      f"{r['median_ms'] / reference['median_ms']:>12.2f}x{r['peak_mib']:>9.0f}MiB  "
      f"{'equal' if r['bits_equal'] else 'DIFFERENT'}"
    )
  os.makedirs(args.out_dir, exist_ok=True)
  with open(
    os.path.join(args.out_dir, "bench_batched_threshold.json"), "w", encoding="utf-8"
  ) as fh:
    json.dump(
      dict(
        thresholds=args.thresholds,
        elements=args.elements,
        dtype=args.dtype,
        quick=args.quick,
        results=results,
      ),
      fh,
      indent=1,
    )
  return 0 if all(r["bits_equal"] for r in results) else 1


if __name__ == "__main__":
  sys.exit(main())
