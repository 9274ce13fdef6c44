#!/usr/bin/env python3
"""What a deep MLP's backward keeps: XLA's temp memory for jax.grad with each activation.

A scanned MLP (`--layers` layers of `--width` units, batch `--batch`, float32; each layer
`act(h @ w + b)`, the loss the sum of squares of the last layer) is differentiated with
jax.grad, jitted, lowered and compiled once per activation; the compiled program's
`memory_analysis().temp_size_in_bytes` is what it allocates beside its arguments and results,
most of it the activations' residuals the scan keeps for the backward:
  relu                  jax.nn.relu
  where                 jnp.where(x > 0, x, 0)
  threshold:auto        jax_threshold.threshold(x, 0, 0, implementation="auto")
  threshold:ffi         ... implementation="ffi" (when the custom call is built)
  threshold:reference   ... implementation="reference"
Each is measured as is and with the layer under jax.checkpoint (the residuals recomputed in
the backward instead of kept). No timing: the numbers are the compiler's. The gradients are
computed once and compared bit for bit with `where`'s.

    python benchmarks/bench_activation_memory.py
    python benchmarks/bench_activation_memory.py --layers 8 --width 2048 --batch 512
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
ACTIVATIONS = ("relu", "where", "threshold:auto", "threshold:ffi", "threshold:reference")
MIB = 1 << 20


def parse_args(argv=None):
  p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  p.add_argument("--layers", type=int, default=4)
  p.add_argument("--width", type=int, default=1024)
  p.add_argument("--batch", type=int, default=256)
  p.add_argument(
    "--activations", default=",".join(ACTIVATIONS), help=f"comma list from {', '.join(ACTIVATIONS)}"
  )
  p.add_argument("--out-dir", default=os.path.join(_HERE, "results"))
  p.add_argument("--quick", action="store_true", help="a tiny MLP: checks that it runs")
  p.add_argument("--seed", type=int, default=0)
  args = p.parse_args(argv)
  if args.quick:
    args.layers, args.width, args.batch = 2, 32, 8
  args.activations = [a.strip() for a in args.activations.split(",") if a.strip()]
  for a in args.activations:
    if a not in ACTIVATIONS:
      p.error(f"unknown activation {a!r}; choose from {', '.join(ACTIVATIONS)}")
  return args


def activation(name):
  import jax  # pylint: disable=g-import-not-at-top
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
  import jax_threshold as jt  # pylint: disable=g-import-not-at-top

  if name == "relu":
    return jax.nn.relu
  if name == "where":
    return lambda x: jnp.where(x > 0, x, 0)
  implementation = name.split(":", 1)[1]
  return lambda x: jt.threshold(x, 0.0, 0.0, implementation=implementation)


def mlp_loss(act, checkpoint):
  """loss(params, x) of the scanned MLP; `checkpoint` recomputes each layer in the backward."""
  import jax  # pylint: disable=g-import-not-at-top
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top

  def layer(h, wb):
    w, b = wb
    return act(h @ w + b), None

  body = jax.checkpoint(layer) if checkpoint else layer

  def loss(params, x):
    h, _ = jax.lax.scan(body, x, params)
    return jnp.sum(h * h)

  return loss


def measure(name, checkpoint, params, x):
  """The compiled gradient's memory analysis, and the gradient itself."""
  import jax  # pylint: disable=g-import-not-at-top

  grad = jax.jit(jax.grad(mlp_loss(activation(name), checkpoint)))
  compiled = grad.lower(params, x).compile()
  stats = compiled.memory_analysis()
  row = {"activation": name, "checkpoint": checkpoint}
  for field in ("temp_size_in_bytes", "argument_size_in_bytes", "output_size_in_bytes"):
    row[field] = getattr(stats, field, None) if stats is not None else None
  return row, compiled(params, x)


def main(argv=None):
  args = parse_args(argv)
  import jax  # pylint: disable=g-import-not-at-top
  import jax_threshold as jt  # pylint: disable=g-import-not-at-top

  available = jt.available_implementations()
  names = [
    a for a in args.activations if not a.startswith("threshold:") or a[10:] in available + ("auto",)
  ]
  rng = np.random.default_rng(args.seed)
  scale = np.float32(1.0 / np.sqrt(args.width))
  params = (
    (rng.standard_normal((args.layers, args.width, args.width)) * scale).astype(np.float32),
    (rng.standard_normal((args.layers, args.width)) * 0.1).astype(np.float32),
  )
  x = rng.standard_normal((args.batch, args.width)).astype(np.float32)

  rows, grads = [], {}
  for checkpoint in (False, True):
    for name in names:
      row, grads[name, checkpoint] = measure(name, checkpoint, params, x)
      rows.append(row)
  base = {r["checkpoint"]: r["temp_size_in_bytes"] for r in rows if r["activation"] == "relu"}
  where = {c: g for (n, c), g in grads.items() if n == "where"}
  for r in rows:
    temp, relu = r["temp_size_in_bytes"], base.get(r["checkpoint"])
    r["temp_mib"] = None if temp is None else temp / MIB
    r["ratio_vs_relu"] = temp / relu if temp is not None and relu else None
    mine, ref = grads[r["activation"], r["checkpoint"]], where.get(r["checkpoint"])
    r["bits_equal_where"] = (
      None
      if ref is None
      else all(
        np.array_equal(np.asarray(a).view(np.uint32), np.asarray(b).view(np.uint32))
        for a, b in zip(jax.tree_util.tree_leaves(mine), jax.tree_util.tree_leaves(ref))
      )
    )

  shape = f"{args.layers} layers x {args.width} wide, batch {args.batch}, float32, scanned"
  print(f"jax.grad of an MLP ({shape}): compiled temp memory")
  print(f"{'activation':<22}{'checkpoint':>11}{'temp MiB':>10}{'vs relu':>9}  bits = where")
  for r in rows:
    mib = "n/a" if r["temp_mib"] is None else f"{r['temp_mib']:.2f}"
    ratio = "n/a" if r["ratio_vs_relu"] is None else f"{r['ratio_vs_relu']:.2f}"
    print(
      f"{r['activation']:<22}{'yes' if r['checkpoint'] else 'no':>11}{mib:>10}{ratio:>9}"
      f"  {r['bits_equal_where']}"
    )
  os.makedirs(args.out_dir, exist_ok=True)
  path = os.path.join(args.out_dir, "bench_activation_memory.json")
  with open(path, "w") as f:
    json.dump(
      {
        "environment": {
          "jax": jax.__version__,
          "jax_threshold": jt.__version__,
          "backend": jax.default_backend(),
          "python": platform.python_version(),
          "model": shape,
        },
        "results": rows,
      },
      f,
      indent=1,
    )
  print(f"wrote {path}")
  return 0


if __name__ == "__main__":
  sys.exit(main())
