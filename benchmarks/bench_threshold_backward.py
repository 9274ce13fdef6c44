#!/usr/bin/env python3
"""Throughput of threshold_backward: the FFI custom call against its peers.

threshold_backward reads grad_output and x and writes out, so every
implementation is charged 3 * N * itemsize bytes per call; GB/s is that over
the median time of one call. In one process, for each (dtype, size), the
implementations are timed interleaved (each repetition times every one of them
once, in a rotated order) so that load from other processes lands on all of
them alike; the median over repetitions is reported.

Implementations (a line is skipped, and the run says why, when its library or
the native extension is missing):
  ffi, reference, auto  jax_threshold.threshold_backward(..., implementation=)
  xla_where             plain jnp.where(x > t, g, 0) under jax.jit, no primitive
  torch                 torch.ops.aten.threshold_backward
  numpy                 np.where(x > t, g, 0)
  probe_copy            np.copyto into a preallocated buffer (2 streams)
  probe_add             np.add(a, b, out=c) into a preallocated buffer (3 streams)
  probe_torch_add       torch.add(a, b, out=c), torch's thread count (3 streams)
  probe_fresh           np.empty + fill: one write into a freshly allocated buffer
                        (1 stream), the first-touch cost every fresh output pays
The probes run on float32 arrays of the same byte count as the case; the
preallocated ones are the memory-bandwidth ceiling drawn on the plot. With --donate, "ffi+donate"
and "reference+donate" donate grad_output to the jitted call so XLA may write
the result into that already-touched buffer instead of a fresh one.

Every call except the probes returns a freshly allocated output, as XLA does;
at large sizes the first touch of those pages is part of the cost.

    python benchmarks/bench_threshold_backward.py                # 2^10..2^24 (even powers)
    python benchmarks/bench_threshold_backward.py --sizes 10-26 --dtypes float32 \
        --plot docs/bench_threshold_backward.png
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import statistics
import sys
import time

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(_HERE)

FLOAT32_GOAL_SIZES = {"ratio_1m": 1 << 20, "ratio_16m": 1 << 24, "fixed_cost": 1 << 10}
JAX_IMPLS = ("ffi", "reference", "auto")
PROBES = ("probe_copy", "probe_add", "probe_torch_add", "probe_fresh")
DTYPE_NAMES = ("float32", "bfloat16", "int8", "float16", "int32", "uint8")


def _import_jax_threshold():
  """Returns (module, note). Prefers an installed package, then this checkout."""
  import importlib  # pylint: disable=g-import-not-at-top
  errors = []
  for where in (None, _ROOT):
    if where is not None:
      sys.path.insert(0, where)
    try:
      jt = importlib.import_module("jax_threshold")
      if not hasattr(jt, "threshold_backward"):  # e.g. a half-written checkout
        raise ImportError(f"{getattr(jt, '__path__', jt)} has no threshold_backward")
      return jt, None if where is None else f"jax_threshold imported from {where}"
    except Exception as e:  # pylint: disable=broad-except
      errors.append(f"{type(e).__name__}: {e}")
      for name in [m for m in sys.modules if m.split(".")[0] == "jax_threshold"]:
        del sys.modules[name]
      if where is not None:
        sys.path.remove(where)
  return None, ("ffi, reference and auto skipped: jax_threshold not importable ("
                + "; ".join(errors) + ")")


def available_implementations(jt) -> set[str]:
  """What jax_threshold can run here; "auto" always can (it resolves per platform)."""
  return (set(jt.available_implementations()) | {"auto"}) if jt is not None else set()


def why_unavailable(jt, name) -> str:
  """jax_threshold's own reason for `name` being unavailable, if it gives one."""
  try:
    from jax_threshold import lowering  # pylint: disable=g-import-not-at-top
    lowering.check_available(name)
  except Exception as e:  # pylint: disable=broad-except
    return str(e)
  return f"{name!r} not in available_implementations() = {sorted(available_implementations(jt))}"


def _import_torch():
  # libgomp's workers spin after each parallel region by default; on a small,
  # shared machine they then steal the cores from whatever is timed next (and
  # from torch itself: 2^16-element calls measured 8 ms instead of 10 us).
  os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
  try:
    import torch  # pylint: disable=g-import-not-at-top
    return torch, None
  except ImportError as e:
    return None, f"torch and probe_torch_add skipped: torch not importable ({e})"


# ----------------------------------------------------------------------------
# Command line.


def parse_sizes(text: str) -> list[int]:
  """'10,20,24' or '10-24' or '10-24:2' are powers of two; '1000' (> 64) is a count."""
  sizes = []
  for part in text.split(","):
    part = part.strip()
    if not part:
      continue
    if "-" in part:
      span, _, step = part.partition(":")
      lo, hi = (int(v) for v in span.split("-"))
      sizes += [1 << k for k in range(lo, hi + 1, int(step or 1))]
    else:
      k = int(part)
      sizes.append(1 << k if k <= 64 else k)
  if not sizes or any(n <= 0 for n in sizes):
    raise argparse.ArgumentTypeError(f"bad --sizes {text!r}")
  return sorted(set(sizes))


def parse_args(argv=None):
  p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  p.add_argument("--sizes", type=parse_sizes, default=None,
                 help="exponents of 2: '10,20,24', '10-24' or '10-24:2'; a number "
                      "above 64 is an element count (default 10-24:2)")
  p.add_argument("--dtypes", default="float32,bfloat16,int8",
                 help=f"comma list from {', '.join(DTYPE_NAMES)}")
  p.add_argument("--impls", default=None,
                 help="comma list; default every available one of "
                      + ", ".join(JAX_IMPLS + ("xla_where", "torch", "numpy") + PROBES))
  p.add_argument("--repeats", type=int, default=None,
                 help="timed repetitions per case, interleaved (default 21)")
  p.add_argument("--min-sample-s", type=float, default=None,
                 help="calls per sample are batched to last at least this long "
                      "(default 0.002 s)")
  p.add_argument("--threshold", type=float, default=0.5,
                 help="0 takes the ReluGrad kernel, anything else ThresholdGradV2D")
  p.add_argument("--donate", action="store_true",
                 help="also time ffi/reference with grad_output donated")
  p.add_argument("--torch-threads", type=int, default=None,
                 help="torch.set_num_threads (default: torch's own choice)")
  p.add_argument("--out-dir", default=os.path.join(_HERE, "results"),
                 help="where the JSON and PNG go (default benchmarks/results/)")
  p.add_argument("--plot", default=None,
                 help="also write the plot here (e.g. docs/bench_threshold_backward.png)")
  p.add_argument("--no-plot", action="store_true", help="write no PNG")
  p.add_argument("--quick", action="store_true",
                 help="tiny sizes and few repetitions: checks that it runs, "
                      "measures nothing worth keeping")
  p.add_argument("--seed", type=int, default=0)
  args = p.parse_args(argv)
  if args.quick:
    args.sizes = args.sizes or [1 << 10, 1 << 12]
    args.repeats = args.repeats or 3
    args.min_sample_s = args.min_sample_s if args.min_sample_s is not None else 0.0
  args.sizes = args.sizes or parse_sizes("10-24:2")
  args.repeats = args.repeats or 21
  args.min_sample_s = 0.002 if args.min_sample_s is None else args.min_sample_s
  args.dtypes = [d.strip() for d in args.dtypes.split(",") if d.strip()]
  for d in args.dtypes:
    if d not in DTYPE_NAMES:
      p.error(f"unsupported dtype {d!r}; choose from {', '.join(DTYPE_NAMES)}")
  if args.impls:
    args.impls = [i.strip() for i in args.impls.split(",") if i.strip()]
  return args


# ----------------------------------------------------------------------------
# Cases: a name and a zero-argument callable that runs one call to completion.


def make_inputs(dtype_name: str, n: int, threshold: float, rng):
  import ml_dtypes  # pylint: disable=g-import-not-at-top
  dtype = ml_dtypes.bfloat16 if dtype_name == "bfloat16" else np.dtype(dtype_name)
  if np.issubdtype(np.dtype(dtype), np.integer):
    info = np.iinfo(dtype)
    g = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    x = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
  else:
    # Centred on the threshold: about half the elements pass.
    g = rng.standard_normal(n, dtype=np.float32).astype(dtype)
    x = (rng.standard_normal(n, dtype=np.float32) + np.float32(threshold)).astype(dtype)
  return g, x


def expected_output(g, x, threshold):
  """The contract (SPEC §1): floats compared in float32, integers exactly."""
  if np.issubdtype(x.dtype, np.integer):
    mask = x.astype(np.float64) > threshold
  else:
    mask = x.astype(np.float32) > np.float32(threshold)
  return np.where(mask, g, np.zeros((), g.dtype))


def _to_torch(torch, a):
  if a.dtype.name == "bfloat16":
    return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
  return torch.from_numpy(a)


def _from_torch(torch, t, like):
  if t.dtype == torch.bfloat16:
    return t.view(torch.int16).numpy().view(like.dtype)
  return t.numpy()


class Case:
  """One implementation at one (dtype, size): run() does one blocking call."""

  def __init__(self, name, run, result=None, bytes_moved=0, prepare=None, lowers_to=""):
    self.name = name
    self.run = run               # () -> None, blocks until done
    self.result = result         # () -> np.ndarray, for the correctness check
    self.bytes_moved = bytes_moved
    self.prepare = prepare       # (count) -> None, untimed set-up before a sample
    self.lowers_to = lowers_to   # what XLA compiled, for JAX cases


def describe_compiled(hlo_text: str) -> str:
  """'custom-call <target>' / 'fusion', plus any copy XLA inserted (aliasing)."""
  import re  # pylint: disable=g-import-not-at-top
  targets = sorted(set(re.findall(r'custom_call_target="([^"]+)"', hlo_text)))
  parts = [f"custom-call {t}" for t in targets]
  if not targets:
    parts.append("fusion" if " fusion(" in hlo_text else "no kernel")
  copies = len(re.findall(r"= \S+ copy\(", hlo_text))
  if copies:
    parts.append(f"{copies} copy")
  return " + ".join(parts)


def build_cases(names, g, x, threshold, libs, notes, donate):
  """Returns the Cases that can run here; appends a note for each one that cannot."""
  jt, jax, torch = libs["jax_threshold"], libs["jax"], libs["torch"]
  jnp = jax.numpy
  nbytes = 3 * g.size * g.dtype.itemsize
  cases = []
  gj, xj = jax.device_put(g), jax.device_put(x)

  def jax_case(name, fn, donate_g=False):
    if donate_g:
      f = jax.jit(fn, donate_argnums=0)
      pool = []

      def prepare(count):
        pool[:] = [jnp.array(gj, copy=True) for _ in range(count)]
        jax.block_until_ready(pool)

      def run():
        f(pool.pop(), xj).block_until_ready()

      def result():
        prepare(1)
        return np.asarray(f(pool.pop(), xj))
      return Case(name, run, result, nbytes, prepare,
                  describe_compiled(f.lower(gj, xj).compile().as_text()))
    f = jax.jit(fn)
    return Case(name, lambda: f(gj, xj).block_until_ready(),
                lambda: np.asarray(f(gj, xj)), nbytes,
                lowers_to=describe_compiled(f.lower(gj, xj).compile().as_text()))

  available = available_implementations(jt)
  for name in names:
    base, _, suffix = name.partition("+")
    if base in JAX_IMPLS:
      if jt is None:
        continue  # said once, at start-up
      if base not in available:
        notes.add(f"{base} skipped: {why_unavailable(jt, base)}")
        continue
      fn = (lambda impl: lambda gg, xx: jt.threshold_backward(
          gg, xx, threshold, implementation=impl))(base)
      cases.append(jax_case(name, fn, donate_g=suffix == "donate"))
    elif name == "xla_where":
      cases.append(jax_case(name, lambda gg, xx: jnp.where(
          xx > threshold, gg, jnp.zeros((), gg.dtype))))
    elif name == "numpy":
      zero = np.zeros((), g.dtype)
      box = {}

      def run_np(zero=zero, box=box):
        box["out"] = np.where(x > threshold, g, zero)
      cases.append(Case(name, run_np, lambda box=box, f=run_np: (f(), box["out"])[1],
                        nbytes))
    elif name == "torch":
      if torch is None:
        continue
      gt, xt = _to_torch(torch, g), _to_torch(torch, x)
      op = torch.ops.aten.threshold_backward
      box = {}

      def run_torch(gt=gt, xt=xt, box=box, op=op):
        box["out"] = op(gt, xt, threshold)

      def result_torch(box=box, run_torch=run_torch):
        run_torch()
        return _from_torch(torch, box["out"], g)
      cases.append(Case(name, run_torch, result_torch, nbytes))
    elif name in PROBES:
      # float32 buffers of the case's byte count: a ceiling in bytes, whatever the dtype.
      words = max(1, g.nbytes // 4)
      a = np.ones(words, np.float32)
      b = np.full(words, 2.0, np.float32)
      c = np.empty(words, np.float32)
      c.fill(0)  # touched once here, so the probe never pays first touch
      if name == "probe_fresh":
        cases.append(Case(name, lambda words=words: np.empty(words, np.float32).fill(1.0),
                          None, 4 * words))
      elif name == "probe_copy":
        cases.append(Case(name, lambda a=a, c=c: np.copyto(c, a), None, 2 * a.nbytes))
      elif name == "probe_add":
        cases.append(Case(name, lambda a=a, b=b, c=c: np.add(a, b, out=c), None,
                          3 * a.nbytes))
      elif torch is not None:
        ta, tb, tc = (torch.from_numpy(v) for v in (a, b, c))
        cases.append(Case(name, lambda ta=ta, tb=tb, tc=tc: torch.add(ta, tb, out=tc),
                          None, 3 * a.nbytes))
    else:
      raise ValueError(f"unknown implementation {name!r}")
  return cases


# ----------------------------------------------------------------------------
# Timing.


def _time_sample(case: Case, number: int) -> float:
  if case.prepare is not None:
    case.prepare(number)
  run = case.run
  t0 = time.perf_counter()
  for _ in range(number):
    run()
  return (time.perf_counter() - t0) / number


def calibrate(case: Case, min_sample_s: float) -> int:
  """Warms up (compiles), then picks calls per sample so a sample lasts min_sample_s."""
  _time_sample(case, 1)
  t = min(_time_sample(case, 1) for _ in range(3))
  if min_sample_s <= 0 or t <= 0:
    return 1
  return int(min(10000, max(1, math.ceil(min_sample_s / t))))


def time_interleaved(cases, repeats, min_sample_s):
  """Returns {name: [seconds per call, one per repetition]}."""
  numbers = {c.name: calibrate(c, min_sample_s) for c in cases}
  samples = {c.name: [] for c in cases}
  for r in range(repeats):
    k = r % len(cases)
    for case in cases[k:] + cases[:k]:   # rotate who goes first
      samples[case.name].append(_time_sample(case, numbers[case.name]))
  return samples, numbers


def _quantile(values, q):
  s = sorted(values)
  pos = q * (len(s) - 1)
  lo, hi = math.floor(pos), math.ceil(pos)
  return s[lo] + (s[hi] - s[lo]) * (pos - lo)


# ----------------------------------------------------------------------------
# Reporting.


def reference_name(rows_by_impl):
  return "reference" if "reference" in rows_by_impl else (
      "xla_where" if "xla_where" in rows_by_impl else None)


def add_ratios(rows):
  """Adds ratio_vs_reference / ratio_vs_torch (throughput ratios, paired) to each row."""
  groups = {}
  for row in rows:
    groups.setdefault((row["dtype"], row["size"]), {})[row["impl"]] = row
  for group in groups.values():
    ref = reference_name(group)
    for row in group.values():
      for key, other in (("ratio_vs_reference", ref), ("ratio_vs_torch", "torch")):
        base = group.get(other) if other else None
        row[key] = (time_ratio(base, row)[0] * row["bytes"] / base["bytes"]
                    if base and base["bytes"] else None)
      row["ratio_base"] = ref


def paired_time_ratio(row_a, row_b):
  """Median over repetitions of time_a / time_b, with its IQR, or None.

  Interleaving puts a's and b's samples of one repetition close together in
  time, so a burst of load from other processes scales both; the per-repetition
  ratio cancels it where the ratio of the two medians would not.
  """
  sa, sb = row_a.get("samples_s"), row_b.get("samples_s")
  if not sa or not sb or len(sa) != len(sb):
    return None
  per = [ta / tb for ta, tb in zip(sa, sb) if tb > 0]
  if not per:
    return None
  return statistics.median(per), _quantile(per, 0.25), _quantile(per, 0.75)


def time_ratio(row_a, row_b):
  """(time_a / time_b, how it was computed): paired when samples allow it."""
  paired = paired_time_ratio(row_a, row_b)
  if paired is not None:
    v, lo, hi = paired
    return v, f"paired median over {len(row_a['samples_s'])} reps, IQR {lo:.2f}-{hi:.2f}"
  return row_a["median_s"] / row_b["median_s"], "ratio of medians"


def evaluate_goals(rows):
  """The issue's float32 goals, each PASS, FAIL or N/A (with why)."""
  by = {(r["impl"], r["size"]): r for r in rows if r["dtype"] == "float32"}
  n = FLOAT32_GOAL_SIZES
  goals = []

  def add(name, text, a, b, size, *, throughput_at_least=None, time_at_most=None):
    ra, rb = by.get((a, size)), by.get((b, size))
    goal = {"goal": name, "text": text}
    if not ra or not rb:
      goal.update(status="N/A", value=None,
                  why=f"needs {a} and {b} at 2^{int(math.log2(size))} (float32)")
    elif throughput_at_least is not None:
      t, how = time_ratio(rb, ra)   # throughput a/b = time b/a
      goal.update(status="PASS" if t >= throughput_at_least else "FAIL", value=t,
                  why=f"{a} {ra['gbps']:.2f} GB/s vs {b} {rb['gbps']:.2f} GB/s; "
                      f"throughput ratio {how}")
    else:
      t, how = time_ratio(ra, rb)
      goal.update(status="PASS" if t <= time_at_most else "FAIL", value=t,
                  why=f"{a} {ra['median_s'] * 1e6:.1f} us vs {b} "
                      f"{rb['median_s'] * 1e6:.1f} us; time ratio {how}")
    goals.append(goal)

  add("ffi_vs_reference_2^20", "FFI throughput >= 1.3x reference at 2^20",
      "ffi", "reference", n["ratio_1m"], throughput_at_least=1.3)
  add("ffi_vs_reference_2^24", "FFI throughput >= 1.0x reference at 2^24",
      "ffi", "reference", n["ratio_16m"], throughput_at_least=1.0)
  add("ffi_vs_torch_2^24", "FFI throughput >= 1.0x PyTorch at 2^24",
      "ffi", "torch", n["ratio_16m"], throughput_at_least=1.0)
  add("ffi_fixed_cost_2^10", "FFI time <= 2x reference time at 2^10",
      "ffi", "reference", n["fixed_cost"], time_at_most=2.0)
  # With --donate: the same two throughput goals when grad_output is donated
  # (the backward-pass case, where grad_output dies at this op). Informational.
  if any(impl.endswith("+donate") for impl, _ in by):
    add("ffi_vs_reference_2^20_donated", "  same, both donating grad_output",
        "ffi+donate", "reference+donate", n["ratio_1m"], throughput_at_least=1.3)
    add("ffi_vs_reference_2^24_donated", "  same at 2^24, both donating",
        "ffi+donate", "reference+donate", n["ratio_16m"], throughput_at_least=1.0)
  return goals


def format_table(rows) -> str:
  head = (f"{'dtype':<9} {'size':>9} {'impl':<17} {'median us':>11} "
          f"{'GB/s':>8} {'vs ref':>7} {'vs torch':>8} {'IQR %':>6} {'best GB/s':>9} "
          f"{'calls':>6}")
  lines = [head, "-" * len(head)]
  last = None
  for r in rows:
    key = (r["dtype"], r["size"])
    if last is not None and key != last:
      lines.append("")
    last = key
    fmt = lambda v: f"{v:.2f}" if v is not None else "-"
    iqr = 100 * (r["p75_s"] - r["p25_s"]) / r["median_s"] if r["median_s"] else 0
    lines.append(
        f"{r['dtype']:<9} {'2^%d' % int(math.log2(r['size'])) if r['size'] & (r['size'] - 1) == 0 else r['size']:>9} "
        f"{r['impl']:<17} {r['median_s'] * 1e6:>11.1f} {r['gbps']:>8.2f} "
        f"{fmt(r['ratio_vs_reference']):>7} {fmt(r['ratio_vs_torch']):>8} "
        f"{iqr:>6.1f} {r['bytes'] / r['min_s'] / 1e9 if r['min_s'] else 0:>9.2f} "
        f"{r['calls_per_sample']:>6}")
  return "\n".join(lines)


def format_goals(goals) -> str:
  lines = []
  for g in goals:
    value = f"{g['value']:.2f}" if g["value"] is not None else "-"
    lines.append(f"  [{g['status']:<4}] {g['text']:<52} {value:>6}  ({g['why']})")
  return "\n".join(lines)


def environment(libs, args, notes):
  jax = libs["jax"]
  env = {
      "time": datetime.datetime.now().isoformat(timespec="seconds"),
      "python": platform.python_version(),
      "platform": platform.platform(),
      "cpu_count": os.cpu_count(),
      "numpy": np.__version__,
      "jax": jax.__version__,
      "jax_backend": jax.default_backend(),
      "XLA_FLAGS": os.environ.get("XLA_FLAGS", ""),
      "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", ""),
      "threshold": args.threshold,
      "repeats": args.repeats,
      "min_sample_s": args.min_sample_s,
      "quick": args.quick,
      "notes": sorted(notes),
  }
  try:
    import jaxlib  # pylint: disable=g-import-not-at-top
    env["jaxlib"] = jaxlib.__version__
  except Exception:  # pylint: disable=broad-except
    pass
  if libs["jax_threshold"] is not None:
    jt = libs["jax_threshold"]
    env["jax_threshold"] = getattr(jt, "__version__", "?")
    env["jax_threshold_path"] = os.path.dirname(jt.__file__)
    env["available_implementations"] = list(jt.available_implementations())
  if libs["torch"] is not None:
    env["torch"] = libs["torch"].__version__
    env["torch_threads"] = libs["torch"].get_num_threads()
  return env


def default_impls(donate):
  names = list(JAX_IMPLS) + ["xla_where", "torch", "numpy"] + list(PROBES)
  if donate:
    names[3:3] = ["ffi+donate", "reference+donate"]
  return names


def main(argv=None):
  args = parse_args(argv)
  notes = set()
  jt, note = _import_jax_threshold()
  if note:
    notes.add(note)
  torch, note = _import_torch()
  if note:
    notes.add(note)
  if torch is not None and args.torch_threads:
    torch.set_num_threads(args.torch_threads)
  import jax  # pylint: disable=g-import-not-at-top
  import jax.numpy  # pylint: disable=g-import-not-at-top,unused-import
  libs = {"jax_threshold": jt, "jax": jax, "torch": torch}
  names = args.impls or default_impls(args.donate)

  rng = np.random.default_rng(args.seed)
  rows = []
  for dtype_name in args.dtypes:
    for n in args.sizes:
      g, x = make_inputs(dtype_name, n, args.threshold, rng)
      cases = build_cases(names, g, x, args.threshold, libs, notes, args.donate)
      want = expected_output(g, x, args.threshold)
      for case in cases:
        if case.result is not None:
          got = case.result()
          if got.dtype == want.dtype and np.array_equal(got.view(np.uint8),
                                                        want.view(np.uint8)):
            continue
          what = (f"{case.name} differs from the contract for {dtype_name}[{n}], "
                  f"threshold {args.threshold}: {int(np.sum(got != want))} elements")
          if case.name.partition("+")[0] in JAX_IMPLS:
            raise AssertionError(what)   # ours: a wrong answer stops the run
          # Others round the threshold their own way (e.g. to bfloat16): say so, go on.
          notes.add(what + " (its own semantics)")
      load_before = os.getloadavg()[0]
      samples, numbers = time_interleaved(cases, args.repeats, args.min_sample_s)
      load_after = os.getloadavg()[0]
      for case in cases:
        s = samples[case.name]
        med = statistics.median(s)
        rows.append({
            "dtype": dtype_name, "size": n, "impl": case.name,
            "bytes": case.bytes_moved, "median_s": med,
            "p25_s": _quantile(s, 0.25), "p75_s": _quantile(s, 0.75),
            "min_s": min(s), "samples_s": s,
            "gbps": case.bytes_moved / med / 1e9 if med > 0 else 0.0,
            "calls_per_sample": numbers[case.name],
            "lowers_to": case.lowers_to,
            "loadavg_1m": [load_before, load_after],
        })
      print(f"  {dtype_name:<9} n={n:<9} done ({len(cases)} impls, load "
            f"{load_before:.1f}->{load_after:.1f})", file=sys.stderr, flush=True)
      del g, x, cases
  add_ratios(rows)

  goals = evaluate_goals(rows)
  env = environment(libs, args, notes)
  print()
  print("threshold_backward: GB/s = 3*N*itemsize / median time of one call "
        f"({args.repeats} interleaved repetitions; ratios: paired, throughput)")
  print(f"jax {env['jax']} ({env['jax_backend']}), cpus {env['cpu_count']}"
        + (f", torch {env['torch']} ({env['torch_threads']} threads)" if "torch" in env else ""))
  for n_ in sorted(notes):
    print(f"note: {n_}")
  print()
  print(format_table(rows))
  print()
  compiled = {}
  for r in rows:
    if r["lowers_to"]:
      compiled.setdefault(r["impl"], set()).add(r["lowers_to"])
  for impl, what in compiled.items():
    print(f"compiled: {impl:<17} {' | '.join(sorted(what))}")
  print()
  print("goals (float32, this run)" + (" -- --quick: a smoke run, not a measurement:"
                                         if args.quick else ":"))
  print(format_goals(goals))

  os.makedirs(args.out_dir, exist_ok=True)
  json_path = os.path.join(args.out_dir, "bench_threshold_backward.json")
  with open(json_path, "w") as f:
    json.dump({"benchmark": "threshold_backward", "environment": env,
               "results": rows, "goals": goals}, f, indent=1)
  print(f"\nwrote {json_path}")
  if not args.no_plot:
    sys.path.insert(0, _HERE)
    import plot  # pylint: disable=g-import-not-at-top
    for path in filter(None, [os.path.join(args.out_dir, "bench_threshold_backward.png"),
                              args.plot]):
      if plot.plot_threshold_backward(json_path, path):
        print(f"wrote {path}")
  return 0


if __name__ == "__main__":
  sys.exit(main())
