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
  aclnn_phase2          phase two of the executor from Python (jax_threshold.aclnn,
                        soc "host"), into an already-touched output: no XLA involved
  torch                 torch.ops.aten.threshold_backward, in a separate process
  numpy                 np.where(x > t, g, 0)
  probe_copy            np.copyto into a preallocated buffer (2 streams)
  probe_add             np.add(a, b, out=c) into a preallocated buffer (3 streams, 1 thread)
  probe_torch_add       torch.add(a, b, out=c), torch's threads, in the torch process
                        (3 streams): the best loop this machine runs, the ceiling
  probe_fresh           np.empty + fill: one write into a freshly allocated buffer
                        (1 stream), the first-touch cost every fresh output pays
The other probes run on float32 arrays of the same byte count as the case; the
preallocated ones are the memory-bandwidth ceiling drawn on the plot. With --donate, "ffi+donate"
and "reference+donate" donate grad_output to the jitted call so XLA may write
the result into that already-touched buffer instead of a fresh one.

PyTorch runs in its own process, with its defaults (its own thread count, and
OMP_WAIT_POLICY as the environment has it: unset, libgomp's workers spin a
while after each call). The two processes take turns, sample by sample, in the
same interleaved order, so neither one's threads run while the other is timed;
after each torch sample the JAX side waits a few milliseconds for the spinning
workers to go to sleep.

Every call except the probes and aclnn_phase2 returns a freshly allocated
output, as XLA does; at large sizes the first touch of those pages is part of
the cost.

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

JAX_IMPLS = ("ffi", "reference", "auto")
PROBES = ("probe_copy", "probe_add", "probe_torch_add", "probe_fresh")
TORCH_IMPLS = ("torch", "probe_torch_add")  # run in the torch process
DTYPE_NAMES = ("float32", "bfloat16", "int8", "float16", "int32", "uint8")
# Calls per sample last at least this long: the first calls after other work run slower, and
# much shorter samples made the custom calls' medians several times their steady-loop times
# (benchmarks/README.md, measurement log).
DEFAULT_MIN_SAMPLE_S = 0.02
# After a torch sample, time for libgomp's spinning workers to go to sleep before JAX is timed.
TORCH_SETTLE_S = 0.005

# The speed goals, each judged within one run: (name, dtype, impl, baseline, size, at least). A baseline
# "GB/s" makes the goal an absolute throughput of `impl`; otherwise it is a throughput ratio.
GOALS = (
  ("ffi_vs_torch_2^20", "float32", "ffi", "torch", 1 << 20, 1.0),
  ("ffi_vs_torch_2^22", "float32", "ffi", "torch", 1 << 22, 1.0),
  ("ffi_vs_torch_2^24", "float32", "ffi", "torch", 1 << 24, 1.0),
  ("ffi_vs_reference_2^10", "float32", "ffi", "reference", 1 << 10, 1.0),
  ("ffi_vs_reference_2^16", "float32", "ffi", "reference", 1 << 16, 1.0),
  ("ffi_vs_reference_2^20", "float32", "ffi", "reference", 1 << 20, 1.5),
  ("ffi_vs_reference_2^22", "float32", "ffi", "reference", 1 << 22, 1.2),
  ("ffi_vs_reference_2^24", "float32", "ffi", "reference", 1 << 24, 1.0),
  ("bfloat16_ffi_vs_reference_2^20", "bfloat16", "ffi", "reference", 1 << 20, 1.0),
  ("bfloat16_ffi_vs_reference_2^24", "bfloat16", "ffi", "reference", 1 << 24, 1.0),
  ("int8_ffi_vs_reference_2^20", "int8", "ffi", "reference", 1 << 20, 1.0),
  ("int8_ffi_vs_reference_2^24", "int8", "ffi", "reference", 1 << 24, 1.0),
  ("aclnn_phase2_2^20", "float32", "aclnn_phase2", "GB/s", 1 << 20, 120.0),
)
# The same-run ceiling each goal is held against: the best of these loops' bandwidth at that size.
CEILING_PROBES = ("probe_torch_add", "probe_add")


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
  return None, (
    "ffi, reference and auto skipped: jax_threshold not importable (" + "; ".join(errors) + ")"
  )


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
  """torch, for the torch process only: the benchmark process never imports it."""
  try:
    import torch  # pylint: disable=g-import-not-at-top

    return torch, None
  except ImportError as e:
    return None, f"torch and probe_torch_add skipped: torch not importable ({e})"


def case_rng(seed: int, dtype_name: str, n: int):
  """The generator of one case's inputs: both processes draw the same arrays."""
  return np.random.default_rng([seed, DTYPE_NAMES.index(dtype_name), n])


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
  p.add_argument(
    "--sizes",
    type=parse_sizes,
    default=None,
    help="exponents of 2: '10,20,24', '10-24' or '10-24:2'; a number "
    "above 64 is an element count (default 10-24:2)",
  )
  p.add_argument(
    "--dtypes", default="float32,bfloat16,int8", help=f"comma list from {', '.join(DTYPE_NAMES)}"
  )
  p.add_argument(
    "--impls",
    default=None,
    help="comma list; default every available one of "
    + ", ".join(JAX_IMPLS + ("xla_where", "torch", "numpy") + PROBES),
  )
  p.add_argument(
    "--repeats", type=int, default=None, help="timed repetitions per case, interleaved (default 21)"
  )
  p.add_argument(
    "--min-sample-s",
    type=float,
    default=None,
    help="calls per sample are batched to last at least this long "
    "(default 0.02 s: shorter samples are dominated by the slow "
    "first calls after other work, benchmarks/README.md)",
  )
  p.add_argument(
    "--threshold",
    type=float,
    default=0.5,
    help="0 takes the ReluGrad kernel, anything else ThresholdGradV2D",
  )
  p.add_argument(
    "--donate", action="store_true", help="also time ffi/reference with grad_output donated"
  )
  p.add_argument(
    "--torch-threads",
    type=int,
    default=None,
    help="torch.set_num_threads (default: torch's own choice)",
  )
  p.add_argument(
    "--out-dir",
    default=os.path.join(_HERE, "results"),
    help="where the JSON and PNG go (default benchmarks/results/)",
  )
  p.add_argument(
    "--plot", default=None, help="also write the plot here (e.g. docs/bench_threshold_backward.png)"
  )
  p.add_argument("--no-plot", action="store_true", help="write no PNG")
  p.add_argument(
    "--quick",
    action="store_true",
    help="tiny sizes and few repetitions: checks that it runs, measures nothing worth keeping",
  )
  p.add_argument("--seed", type=int, default=0)
  p.add_argument("--no-torch", action="store_true", help="skip torch and probe_torch_add")
  p.add_argument("--torch-worker", action="store_true", help=argparse.SUPPRESS)
  args = p.parse_args(argv)
  if args.quick:
    args.sizes = args.sizes or [1 << 10, 1 << 12]
    args.repeats = args.repeats or 3
    args.min_sample_s = args.min_sample_s if args.min_sample_s is not None else 0.0
  args.sizes = args.sizes or parse_sizes("10-24:2")
  args.repeats = args.repeats or 21
  args.min_sample_s = DEFAULT_MIN_SAMPLE_S if args.min_sample_s is None else args.min_sample_s
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
  """The contract (docs/behaviour.md §1): floats compared in float32, integers exactly."""
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
    self.run = run  # () -> None, blocks until done
    self.result = result  # () -> np.ndarray, for the correctness check
    self.bytes_moved = bytes_moved
    self.prepare = prepare  # (count) -> None, untimed set-up before a sample
    self.lowers_to = lowers_to  # what XLA compiled, for JAX cases

  def calibrate(self, min_sample_s):
    return calibrate(self, min_sample_s)

  def sample(self, number):
    """Seconds per call, the mean over `number` calls."""
    return _time_sample(self, number)


class RemoteCase:
  """A case timed in the torch process (TorchWorker), on the same inputs."""

  def __init__(self, worker, name, bytes_moved, number):
    self.name = name
    self.bytes_moved = bytes_moved
    self.lowers_to = ""
    self.result = None  # checked in the torch process
    self._worker = worker
    self._number = number

  def calibrate(self, min_sample_s):
    del min_sample_s  # calibrated by the torch process
    return self._number

  def sample(self, number):
    seconds = self._worker.request(cmd="sample", impl=self.name, number=number)["seconds"]
    time.sleep(TORCH_SETTLE_S)
    return seconds


class TorchWorker:
  """PyTorch in a child process with its own defaults, timed on request.

  The child is this script with --torch-worker: it reads one JSON request a line on stdin and
  answers one JSON line on stdout. Only one side runs at a time.
  """

  def __init__(self, args):
    import subprocess  # pylint: disable=g-import-not-at-top

    cmd = [sys.executable, os.path.abspath(__file__), "--torch-worker", "--seed", str(args.seed)]
    if args.torch_threads:
      cmd += ["--torch-threads", str(args.torch_threads)]
    self._proc = subprocess.Popen(
      cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
    )
    self.info = self.request(cmd="hello")

  def request(self, **req):
    self._proc.stdin.write(json.dumps(req) + "\n")
    self._proc.stdin.flush()
    line = self._proc.stdout.readline()
    if not line:
      raise RuntimeError(f"the torch process exited (request {req})")
    reply = json.loads(line)
    if "error" in reply:
      raise RuntimeError(f"the torch process failed: {reply['error']}")
    return reply

  def close(self):
    try:
      self.request(cmd="quit")
    except Exception:  # pylint: disable=broad-except
      pass
    self._proc.wait(timeout=30)


def torch_worker_main(args) -> int:
  """The torch process: sets up cases on request and times them."""
  torch, note = _import_torch()
  if torch is not None and args.torch_threads:
    torch.set_num_threads(args.torch_threads)
  cases = {}

  def reply(**obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()

  for line in sys.stdin:
    req = json.loads(line)
    try:
      if req["cmd"] == "hello":
        reply(
          available=torch is not None,
          note=note,
          version=torch.__version__ if torch else None,
          threads=torch.get_num_threads() if torch else None,
          omp_wait_policy=os.environ.get("OMP_WAIT_POLICY", ""),
        )
      elif req["cmd"] == "setup":
        g, x = make_inputs(
          req["dtype"], req["n"], req["threshold"], case_rng(args.seed, req["dtype"], req["n"])
        )
        notes = []
        cases.clear()
        for case in build_torch_cases(req["impls"], g, x, req["threshold"], torch):
          if case.result is not None:
            got, want = case.result(), expected_output(g, x, req["threshold"])
            if not (
              got.dtype == want.dtype and np.array_equal(got.view(np.uint8), want.view(np.uint8))
            ):
              notes.append(
                f"{case.name} differs from the contract for {req['dtype']}[{req['n']}], "
                f"threshold {req['threshold']}: {int(np.sum(got != want))} elements "
                "(its own semantics)"
              )
          cases[case.name] = (case, calibrate(case, req["min_sample_s"]))
        reply(
          cases={
            name: {"bytes": c.bytes_moved, "number": number} for name, (c, number) in cases.items()
          },
          notes=notes,
        )
      elif req["cmd"] == "sample":
        case, _ = cases[req["impl"]]
        reply(seconds=_time_sample(case, req["number"]))
      elif req["cmd"] == "quit":
        reply(bye=True)
        return 0
    except Exception as e:  # pylint: disable=broad-except
      reply(error=f"{type(e).__name__}: {e}")
  return 0


def build_torch_cases(names, g, x, threshold, torch):
  """The cases of the torch process (TORCH_IMPLS among `names`)."""
  cases = []
  nbytes = 3 * g.size * g.dtype.itemsize
  if torch is None:
    return cases
  for name in names:
    if name == "torch":
      gt, xt = _to_torch(torch, g), _to_torch(torch, x)
      op = torch.ops.aten.threshold_backward
      box = {}

      def run_torch(gt=gt, xt=xt, box=box, op=op):
        box["out"] = op(gt, xt, threshold)

      def result_torch(box=box, run_torch=run_torch):
        run_torch()
        return _from_torch(torch, box["out"], g)

      cases.append(Case(name, run_torch, result_torch, nbytes))
    elif name == "probe_torch_add":
      words = max(1, g.nbytes // 4)
      ta = torch.ones(words, dtype=torch.float32)
      tb = torch.full((words,), 2.0, dtype=torch.float32)
      tc = torch.zeros(words, dtype=torch.float32)  # touched here: never pays first touch
      cases.append(
        Case(name, lambda ta=ta, tb=tb, tc=tc: torch.add(ta, tb, out=tc), None, 3 * 4 * words)
      )
  return cases


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
  """Returns the Cases that can run here; appends a note for each one that cannot.

  The torch cases are RemoteCases of the torch process (set up by setup_torch_cases).
  """
  del donate
  jt, jax = libs["jax_threshold"], libs["jax"]
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

      return Case(
        name, run, result, nbytes, prepare, describe_compiled(f.lower(gj, xj).compile().as_text())
      )
    f = jax.jit(fn)
    return Case(
      name,
      lambda: f(gj, xj).block_until_ready(),
      lambda: np.asarray(f(gj, xj)),
      nbytes,
      lowers_to=describe_compiled(f.lower(gj, xj).compile().as_text()),
    )

  available = available_implementations(jt)
  for name in names:
    base, _, suffix = name.partition("+")
    if base in JAX_IMPLS:
      if jt is None:
        continue  # said once, at start-up
      if base not in available:
        notes.add(f"{base} skipped: {why_unavailable(jt, base)}")
        continue
      fn = (
        lambda impl: lambda gg, xx: jt.threshold_backward(gg, xx, threshold, implementation=impl)
      )(base)
      cases.append(jax_case(name, fn, donate_g=suffix == "donate"))
    elif name == "xla_where":
      cases.append(
        jax_case(name, lambda gg, xx: jnp.where(xx > threshold, gg, jnp.zeros((), gg.dtype)))
      )
    elif name == "numpy":
      zero = np.zeros((), g.dtype)
      box = {}

      def run_np(zero=zero, box=box):
        box["out"] = np.where(x > threshold, g, zero)

      cases.append(Case(name, run_np, lambda box=box, f=run_np: (f(), box["out"])[1], nbytes))
    elif name in TORCH_IMPLS:
      continue  # the torch process's
    elif name == "aclnn_phase2":
      if jt is None or "ffi" not in available:
        notes.add("aclnn_phase2 skipped: needs the native extension")
        continue
      cases.append(aclnn_phase2_case(g, x, threshold, nbytes))
    elif name in PROBES:
      # float32 buffers of the case's byte count: a ceiling in bytes, whatever the dtype.
      words = max(1, g.nbytes // 4)
      a = np.ones(words, np.float32)
      b = np.full(words, 2.0, np.float32)
      c = np.empty(words, np.float32)
      c.fill(0)  # touched once here, so the probe never pays first touch
      if name == "probe_fresh":
        cases.append(
          Case(name, lambda words=words: np.empty(words, np.float32).fill(1.0), None, 4 * words)
        )
      elif name == "probe_copy":
        cases.append(Case(name, lambda a=a, c=c: np.copyto(c, a), None, 2 * a.nbytes))
      elif name == "probe_add":
        cases.append(Case(name, lambda a=a, b=b, c=c: np.add(a, b, out=c), None, 3 * a.nbytes))
    else:
      raise ValueError(f"unknown implementation {name!r}")
  return cases


def aclnn_phase2_case(g, x, threshold, nbytes):
  """Phase two of the executor (soc "host") into one preallocated, touched output."""
  from jax_threshold import aclnn  # pylint: disable=g-import-not-at-top

  out = np.zeros_like(g)
  pending = []

  def plan():
    status, ws, executor = aclnn.threshold_backward_get_workspace_size(
      g, x, threshold, out, soc="host"
    )
    if status != aclnn.ACLNN_SUCCESS:
      raise RuntimeError(f"aclnn phase one failed: {aclnn.recent_error_message()}")
    return np.empty(ws, np.uint8) if ws else None, ws, executor

  def prepare(count):
    pending[:] = [plan() for _ in range(count)]

  def run():
    workspace, ws, executor = pending.pop()
    if aclnn.threshold_backward(workspace, ws, executor) != aclnn.ACLNN_SUCCESS:
      raise RuntimeError(f"aclnn phase two failed: {aclnn.recent_error_message()}")

  def result():
    prepare(1)
    run()
    return out.copy()

  return Case("aclnn_phase2", run, result, nbytes, prepare)


def setup_torch_cases(worker, names, dtype_name, n, threshold, min_sample_s, notes):
  """RemoteCases for the torch implementations among `names` (none without torch)."""
  wanted = [name for name in names if name in TORCH_IMPLS]
  if worker is None or not wanted:
    return []
  reply = worker.request(
    cmd="setup", impls=wanted, dtype=dtype_name, n=n, threshold=threshold, min_sample_s=min_sample_s
  )
  notes.update(reply["notes"])
  return [
    RemoteCase(worker, name, info["bytes"], info["number"]) for name, info in reply["cases"].items()
  ]


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
  numbers = {c.name: c.calibrate(min_sample_s) for c in cases}
  samples = {c.name: [] for c in cases}
  for r in range(repeats):
    k = r % len(cases)
    for case in cases[k:] + cases[:k]:  # rotate who goes first
      samples[case.name].append(case.sample(numbers[case.name]))
  return samples, numbers


def _quantile(values, q):
  s = sorted(values)
  pos = q * (len(s) - 1)
  lo, hi = math.floor(pos), math.ceil(pos)
  return s[lo] + (s[hi] - s[lo]) * (pos - lo)


# ----------------------------------------------------------------------------
# Reporting.


def reference_name(rows_by_impl):
  return (
    "reference"
    if "reference" in rows_by_impl
    else ("xla_where" if "xla_where" in rows_by_impl else None)
  )


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
        row[key] = (
          time_ratio(base, row)[0] * row["bytes"] / base["bytes"]
          if base and base["bytes"]
          else None
        )
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


def _size_name(size):
  return f"2^{int(math.log2(size))}" if size & (size - 1) == 0 else str(size)


def ceiling(rows, dtype, size):
  """The same-run bandwidth of the best loop at this case: (probe, GB/s) or None.

  The faster of the probes: a loaded machine can slow the multi-threaded one below the
  single-threaded one.
  """
  by = {(r["impl"], r["dtype"], r["size"]): r for r in rows}
  found = [
    (probe, by[(probe, dtype, size)]["gbps"])
    for probe in CEILING_PROBES
    if (probe, dtype, size) in by
  ]
  return max(found, key=lambda pg: pg[1]) if found else None


def evaluate_goals(rows, goals=GOALS):
  """Each goal PASS, FAIL or N/A (with why), and the best loop's bandwidth beside it.

  A ratio goal needs `impl` at `at_least` times `baseline`'s throughput (paired per
  repetition); "needs" is the GB/s that takes, "ceiling" what the best loop moved in this run:
  a goal whose "needs" exceeds the ceiling cannot be met on this machine.
  """
  by = {(r["impl"], r["dtype"], r["size"]): r for r in rows}
  out = []
  for name, dtype, impl, baseline, size, at_least in goals:
    where = f"{dtype} {_size_name(size)}"
    if baseline == "GB/s":
      text = f"{where}: {impl} >= {at_least:g} GB/s"
    else:
      text = f"{where}: {impl} >= {at_least:g}x {baseline}"
    goal = {"goal": name, "text": text, "dtype": dtype, "size": size, "at_least": at_least}
    ra = by.get((impl, dtype, size))
    rb = by.get((baseline, dtype, size)) if baseline != "GB/s" else None
    if ra is None or (baseline != "GB/s" and rb is None):
      missing = " and ".join(
        i for i, r in ((impl, ra), (baseline, rb)) if r is None and i != "GB/s"
      )
      goal.update(status="N/A", value=None, needs_gbps=None, why=f"no {missing} at {where}")
    elif baseline == "GB/s":
      goal.update(
        status="PASS" if ra["gbps"] >= at_least else "FAIL",
        value=ra["gbps"],
        needs_gbps=at_least,
        why=f"{impl} {ra['gbps']:.1f} GB/s (median {ra['median_s'] * 1e6:.1f} us)",
      )
    else:
      t, how = time_ratio(rb, ra)  # throughput a/b = time b/a
      goal.update(
        status="PASS" if t >= at_least else "FAIL",
        value=t,
        needs_gbps=at_least * rb["gbps"],
        why=f"{impl} {ra['gbps']:.2f} GB/s vs {baseline} {rb['gbps']:.2f} GB/s; "
        f"throughput ratio {how}",
      )
    top = ceiling(rows, dtype, size)
    goal["ceiling"] = None if top is None else {"probe": top[0], "gbps": top[1]}
    out.append(goal)
  return out


def format_table(rows) -> str:
  head = (
    f"{'dtype':<9} {'size':>9} {'impl':<17} {'median us':>11} "
    f"{'GB/s':>8} {'vs ref':>7} {'vs torch':>8} {'IQR %':>6} {'best GB/s':>9} "
    f"{'calls':>6}"
  )
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
      f"{r['calls_per_sample']:>6}"
    )
  return "\n".join(lines)


def format_goals(goals) -> str:
  lines = []
  for g in goals:
    value = f"{g['value']:.2f}" if g["value"] is not None else "-"
    limit = ""
    if g.get("needs_gbps") is not None and g.get("ceiling"):
      c = g["ceiling"]
      limit = f"; needs {g['needs_gbps']:.1f} GB/s, best loop ({c['probe']}) {c['gbps']:.1f} GB/s"
      if g["needs_gbps"] > c["gbps"]:
        limit += ": above this run's ceiling"
    lines.append(f"  [{g['status']:<4}] {g['text']:<40} {value:>7}  ({g['why']}{limit})")
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
  torch_info = libs.get("torch_info") or {}
  if torch_info.get("available"):
    env["torch"] = torch_info["version"]
    env["torch_threads"] = torch_info["threads"]
    env["torch_process"] = "separate process, torch defaults; OMP_WAIT_POLICY=" + (
      torch_info["omp_wait_policy"] or "unset"
    )
  return env


def default_impls(donate):
  names = list(JAX_IMPLS) + ["xla_where", "aclnn_phase2", "torch", "numpy"] + list(PROBES)
  if donate:
    names[3:3] = ["ffi+donate", "reference+donate"]
  return names


def main(argv=None):
  args = parse_args(argv)
  if args.torch_worker:
    return torch_worker_main(args)
  notes = set()
  jt, note = _import_jax_threshold()
  if note:
    notes.add(note)
  names = args.impls or default_impls(args.donate)
  worker = None
  if args.no_torch:
    names = [name for name in names if name not in TORCH_IMPLS]
  elif any(name in TORCH_IMPLS for name in names):
    worker = TorchWorker(args)
    if not worker.info["available"]:
      notes.add(worker.info["note"])
      worker.close()
      worker = None
  import jax  # pylint: disable=g-import-not-at-top
  import jax.numpy  # pylint: disable=g-import-not-at-top,unused-import

  libs = {"jax_threshold": jt, "jax": jax, "torch_info": worker.info if worker else None}

  rows = []
  for dtype_name in args.dtypes:
    for n in args.sizes:
      g, x = make_inputs(dtype_name, n, args.threshold, case_rng(args.seed, dtype_name, n))
      cases = build_cases(names, g, x, args.threshold, libs, notes, args.donate)
      cases += setup_torch_cases(
        worker, names, dtype_name, n, args.threshold, args.min_sample_s, notes
      )
      want = expected_output(g, x, args.threshold)
      for case in cases:
        if case.result is not None:
          got = case.result()
          if got.dtype == want.dtype and np.array_equal(got.view(np.uint8), want.view(np.uint8)):
            continue
          what = (
            f"{case.name} differs from the contract for {dtype_name}[{n}], "
            f"threshold {args.threshold}: {int(np.sum(got != want))} elements"
          )
          if case.name.partition("+")[0] in JAX_IMPLS:
            raise AssertionError(what)  # ours: a wrong answer stops the run
          # Others round the threshold their own way (e.g. to bfloat16): say so, go on.
          notes.add(what + " (its own semantics)")
      load_before = os.getloadavg()[0]
      samples, numbers = time_interleaved(cases, args.repeats, args.min_sample_s)
      load_after = os.getloadavg()[0]
      for case in cases:
        s = samples[case.name]
        med = statistics.median(s)
        rows.append(
          {
            "dtype": dtype_name,
            "size": n,
            "impl": case.name,
            "bytes": case.bytes_moved,
            "median_s": med,
            "p25_s": _quantile(s, 0.25),
            "p75_s": _quantile(s, 0.75),
            "min_s": min(s),
            "samples_s": s,
            "gbps": case.bytes_moved / med / 1e9 if med > 0 else 0.0,
            "calls_per_sample": numbers[case.name],
            "lowers_to": case.lowers_to,
            "loadavg_1m": [load_before, load_after],
          }
        )
      print(
        f"  {dtype_name:<9} n={n:<9} done ({len(cases)} impls, load "
        f"{load_before:.1f}->{load_after:.1f})",
        file=sys.stderr,
        flush=True,
      )
      del g, x, cases
  if worker is not None:
    worker.close()
  add_ratios(rows)

  goals = evaluate_goals(rows)
  env = environment(libs, args, notes)
  print()
  print(
    "threshold_backward: GB/s = 3*N*itemsize / median time of one call "
    f"({args.repeats} interleaved repetitions; ratios: paired, throughput)"
  )
  print(
    f"jax {env['jax']} ({env['jax_backend']}), cpus {env['cpu_count']}"
    + (
      f", torch {env['torch']} ({env['torch_threads']} threads; {env['torch_process']})"
      if "torch" in env
      else ""
    )
  )
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
  print(
    "speed goals (this run; 'best loop' is the same-run ceiling)"
    + (" -- --quick: a smoke run, not a measurement:" if args.quick else ":")
  )
  print(format_goals(goals))
  counts = {k: sum(g["status"] == k for g in goals) for k in ("PASS", "FAIL", "N/A")}
  print("  " + ", ".join(f"{v} {k}" for k, v in counts.items()))

  os.makedirs(args.out_dir, exist_ok=True)
  json_path = os.path.join(args.out_dir, "bench_threshold_backward.json")
  with open(json_path, "w") as f:
    json.dump(
      {"benchmark": "threshold_backward", "environment": env, "results": rows, "goals": goals},
      f,
      indent=1,
    )
  print(f"\nwrote {json_path}")
  if not args.no_plot:
    sys.path.insert(0, _HERE)
    import plot  # pylint: disable=g-import-not-at-top

    for path in filter(
      None, [os.path.join(args.out_dir, "bench_threshold_backward.png"), args.plot]
    ):
      if plot.plot_threshold_backward(json_path, path):
        print(f"wrote {path}")
  return 0


if __name__ == "__main__":
  sys.exit(main())
