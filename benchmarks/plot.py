#!/usr/bin/env python3
"""Plots the JSON written by bench_threshold_backward.py (and bench_flax_step.py).

    python benchmarks/plot.py benchmarks/results/bench_threshold_backward.json \
        docs/bench_threshold_backward.png

Throughput against size, one panel per dtype, one line per implementation;
the bandwidth probes are drawn dashed grey, the ceiling the others sit under.
"""

from __future__ import annotations

import json
import os
import textwrap
import sys

# Fixed colours, so the same implementation looks the same in every plot.
STYLE = {
  "ffi": dict(color="tab:red", marker="o", lw=2.2),
  "reference": dict(color="tab:blue", marker="s", lw=1.8),
  "auto": dict(color="tab:purple", marker="^", lw=1.2, ls=":"),
  "ffi+donate": dict(color="tab:red", marker="o", lw=1.0, ls="--", mfc="none"),
  "reference+donate": dict(color="tab:blue", marker="s", lw=1.0, ls="--", mfc="none"),
  "xla_where": dict(color="tab:cyan", marker=".", lw=1.0),
  "aclnn_phase2": dict(color="tab:brown", marker="x", lw=1.0, ls="-."),
  "torch": dict(color="tab:orange", marker="D", lw=1.8),
  "numpy": dict(color="tab:green", marker="v", lw=1.2),
  "probe_copy": dict(color="0.55", ls="--", lw=1.0),
  "probe_add": dict(color="0.35", ls="--", lw=1.4),
  "probe_torch_add": dict(color="0.15", ls="-.", lw=1.0),
  "probe_fresh": dict(color="0.6", ls=":", lw=1.2),
}


def _pyplot():
  try:
    import matplotlib  # pylint: disable=g-import-not-at-top

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top

    return plt
  except ImportError:
    print("matplotlib not installed: no plot", file=sys.stderr)
    return None


def plot_threshold_backward(json_path: str, png_path: str) -> bool:
  """Writes the throughput plot; False (and says why) when it cannot."""
  plt = _pyplot()
  if plt is None:
    return False
  with open(json_path) as f:
    data = json.load(f)
  rows, env = data["results"], data["environment"]
  dtypes = list(dict.fromkeys(r["dtype"] for r in rows))
  if not dtypes:
    return False
  fig, axes = plt.subplots(
    1, len(dtypes), figsize=(5.2 * len(dtypes), 4.4), squeeze=False, sharey=True
  )
  for ax, dtype in zip(axes[0], dtypes):
    impls = list(dict.fromkeys(r["impl"] for r in rows if r["dtype"] == dtype))
    for impl in impls:
      pts = sorted(
        (r["size"], r["gbps"]) for r in rows if r["dtype"] == dtype and r["impl"] == impl
      )
      style = dict(STYLE.get(impl, {}))
      style.setdefault("marker", ".")
      style.setdefault("ms", 4)
      ax.plot([p[0] for p in pts], [p[1] for p in pts], label=impl, **style)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")  # 0.1 GB/s (dispatch-bound) to 200 GB/s (in cache)
    ax.set_xlabel("elements")
    ax.set_title(dtype)
    ax.grid(True, which="both", alpha=0.25)
  axes[0][0].set_ylabel("GB/s  (3 * N * itemsize / median time)")
  axes[0][-1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
  sub = f"jax {env.get('jax')}, {env.get('cpu_count')} cpus"
  if "torch" in env:
    sub += f", torch {env['torch']} ({env.get('torch_threads')} threads)"
  sub += f", threshold {env.get('threshold')}, {env.get('repeats')} reps, {env.get('time')}"
  fig.suptitle(
    "threshold_backward throughput (fresh outputs; probes: preallocated)\n"
    + textwrap.fill(sub, 60),
    fontsize=9,
  )
  fig.tight_layout()
  os.makedirs(os.path.dirname(os.path.abspath(png_path)), exist_ok=True)
  fig.savefig(png_path, dpi=110)
  plt.close(fig)
  return True


def plot_flax_step(json_path: str, png_path: str) -> bool:
  """Bar chart of median step time per activation, with the IQR as error bars."""
  plt = _pyplot()
  if plt is None:
    return False
  with open(json_path) as f:
    data = json.load(f)
  rows = data["results"]
  if not rows:
    return False
  fig, ax = plt.subplots(figsize=(6.4, 3.6))
  names = [r["activation"] for r in rows]
  med = [r["median_s"] * 1e3 for r in rows]
  err = [
    [(r["median_s"] - r["p25_s"]) * 1e3 for r in rows],
    [(r["p75_s"] - r["median_s"]) * 1e3 for r in rows],
  ]
  colors = [STYLE.get(n.split(":")[-1], {}).get("color", "0.5") for n in names]
  ax.barh(names, med, xerr=err, color=colors)
  ax.set_xlabel("median ms per training step")
  ax.invert_yaxis()
  env = data["environment"]
  ax.set_title(f"Flax MLP step {env.get('model')}, jax {env.get('jax')}", fontsize=9)
  fig.tight_layout()
  os.makedirs(os.path.dirname(os.path.abspath(png_path)), exist_ok=True)
  fig.savefig(png_path, dpi=110)
  plt.close(fig)
  return True


def main(argv):
  if len(argv) != 3:
    print(__doc__, file=sys.stderr)
    return 2
  with open(argv[1]) as f:
    kind = json.load(f).get("benchmark")
  fn = plot_flax_step if kind == "flax_step" else plot_threshold_backward
  return 0 if fn(argv[1], argv[2]) else 1


if __name__ == "__main__":
  sys.exit(main(sys.argv))
