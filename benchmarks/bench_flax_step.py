#!/usr/bin/env python3
"""Time of one Flax MLP training step: the Threshold activation against jax.nn.relu.

The same MLP (Dense layers with an activation between them, softmax cross
entropy, Adam, parameters and optimizer state donated to the jitted step) is
built once per activation:
  relu                      jax.nn.relu
  threshold:ffi             jax_threshold.linen.Threshold(0, 0, implementation="ffi")
  threshold:reference       ... implementation="reference"
  threshold:auto            ... implementation="auto"
With threshold 0 and value 0 the Threshold activation is ReLU, so every model
computes the same function from the same initial parameters; the run checks
that the first step's losses agree before it times anything. Steps are timed
interleaved (each repetition runs every model once, in a rotated order) and
the median is reported, with each model's ratio to relu.

    python benchmarks/bench_flax_step.py
    python benchmarks/bench_flax_step.py --api nnx --batch 512 --features 784,2048,2048,10
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _HERE)
import bench_threshold_backward as btb  # noqa: E402  # pylint: disable=g-import-not-at-top,wrong-import-position

ACTIVATIONS = ("relu", "threshold:ffi", "threshold:reference", "threshold:auto")
AUTO_GOAL = 1.05  # "auto" no slower than relu by more than 5 %


def parse_args(argv=None):
  p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  p.add_argument("--api", choices=("linen", "nnx"), default="linen")
  p.add_argument("--batch", type=int, default=256)
  p.add_argument(
    "--features", default="784,1024,1024,10", help="input width, hidden widths..., classes"
  )
  p.add_argument(
    "--activations", default=",".join(ACTIVATIONS), help=f"comma list from {', '.join(ACTIVATIONS)}"
  )
  p.add_argument("--repeats", type=int, default=None, help="default 21")
  p.add_argument(
    "--min-sample-s",
    type=float,
    default=None,
    help="steps per sample are batched to last this long (default 0.05 s)",
  )
  p.add_argument("--out-dir", default=os.path.join(_HERE, "results"))
  p.add_argument("--plot", default=None, help="also write the bar chart here")
  p.add_argument("--no-plot", action="store_true")
  p.add_argument(
    "--quick", action="store_true", help="a tiny model and few repetitions: checks that it runs"
  )
  p.add_argument("--seed", type=int, default=0)
  args = p.parse_args(argv)
  if args.quick:
    args.batch = 8
    args.features = "16,32,4"
    args.repeats = args.repeats or 3
    args.min_sample_s = 0.0 if args.min_sample_s is None else args.min_sample_s
  args.repeats = args.repeats or 21
  args.min_sample_s = 0.05 if args.min_sample_s is None else args.min_sample_s
  args.features = [int(v) for v in args.features.split(",")]
  if len(args.features) < 3:
    p.error("--features needs an input width, at least one hidden width and the classes")
  args.activations = [a.strip() for a in args.activations.split(",") if a.strip()]
  for a in args.activations:
    if a not in ACTIVATIONS:
      p.error(f"unknown activation {a!r}; choose from {', '.join(ACTIVATIONS)}")
  return args


# ----------------------------------------------------------------------------
# Models: the same MLP under Linen or NNX; `act` is "relu" or an implementation.


def linen_model(features, act):
  import flax.linen as nn  # pylint: disable=g-import-not-at-top

  if act != "relu":
    from jax_threshold.linen import Threshold  # pylint: disable=g-import-not-at-top
  import jax  # pylint: disable=g-import-not-at-top

  class MLP(nn.Module):
    @nn.compact
    def __call__(self, x):
      for width in features[1:-1]:
        x = nn.Dense(width)(x)
        x = jax.nn.relu(x) if act == "relu" else Threshold(0.0, 0.0, implementation=act)(x)
      return nn.Dense(features[-1])(x)

  return MLP()


def _adam_step(apply, params, batch):
  """Returns (step, state): one jitted Adam step of softmax cross-entropy, donating state."""
  import jax  # pylint: disable=g-import-not-at-top
  import optax  # pylint: disable=g-import-not-at-top

  tx = optax.adam(1e-3)

  def loss_fn(params, x, y):
    return optax.softmax_cross_entropy_with_integer_labels(apply(params, x), y).mean()

  def train_step(params, opt_state, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    updates, opt_state = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss

  jitted = jax.jit(train_step, donate_argnums=(0, 1))
  x, y = batch
  state = (params, tx.init(params))

  def step(state):
    p, o = state
    p, o, loss = jitted(p, o, x, y)
    return (p, o), loss

  step.hlo = lambda: jitted.lower(*state, x, y).compile().as_text()
  return step, state


def make_linen_step(features, act, batch, seed):
  """Returns (step, state): step(state) -> (state, loss), donating state."""
  import jax  # pylint: disable=g-import-not-at-top

  model = linen_model(features, act)
  params = model.init(jax.random.PRNGKey(seed), batch[0][:1])
  return _adam_step(lambda params, x: model.apply(params, x), params, batch)


def make_nnx_step(features, act, batch, seed):
  """Returns (step, state) like make_linen_step, for the same MLP in Flax NNX."""
  import jax  # pylint: disable=g-import-not-at-top
  from flax import nnx  # pylint: disable=g-import-not-at-top

  if act != "relu":
    from jax_threshold.nnx import Threshold  # pylint: disable=g-import-not-at-top

  rngs = nnx.Rngs(seed)
  layers = []
  for a, b in zip(features[:-2], features[1:-1]):
    layers.append(nnx.Linear(a, b, rngs=rngs))
    layers.append(jax.nn.relu if act == "relu" else Threshold(0.0, 0.0, implementation=act))
  layers.append(nnx.Linear(features[-2], features[-1], rngs=rngs))
  model = nnx.Sequential(*layers)
  # Functional form (split state, jax.jit) so the step is the same program as Linen's.
  graphdef, params = nnx.split(model, nnx.Param)

  return _adam_step(lambda params, x: nnx.merge(graphdef, params)(x), params, batch)


class Trainer:
  """One model's training loop as a btb.Case: run() does one step and blocks."""

  def __init__(self, name, step, state):
    self.name, self._step, self._state = name, step, state
    self.last_loss = None

  def run(self):
    self._state, loss = self._step(self._state)
    self.last_loss = loss.block_until_ready()

  def case(self):
    return btb.Case(self.name, self.run)


# ----------------------------------------------------------------------------


def describe_step(hlo_text: str) -> dict:
  """Counts in the compiled step: custom calls (by target), fusions, copies."""
  import re  # pylint: disable=g-import-not-at-top

  targets = re.findall(r'custom_call_target="([^"]+)"', hlo_text)
  return {
    "custom_calls": {t: targets.count(t) for t in sorted(set(targets))},
    "fusions": len(re.findall(r"= \S+ fusion\(", hlo_text)),
    "copies": len(re.findall(r"= \S+ copy\(", hlo_text)),
  }


def evaluate_goals(rows):
  by = {r["activation"]: r for r in rows}
  auto, relu = by.get("threshold:auto"), by.get("relu")
  goal = {"goal": "flax_auto_vs_relu", "text": "Flax step: auto <= 1.05x relu time"}
  if auto and relu:
    v, how = btb.time_ratio(auto, relu)
    goal.update(
      status="PASS" if v <= AUTO_GOAL else "FAIL",
      value=v,
      why=f"auto {auto['median_s'] * 1e3:.2f} ms vs relu "
      f"{relu['median_s'] * 1e3:.2f} ms; time ratio {how}",
    )
  else:
    goal.update(status="N/A", value=None, why="needs threshold:auto and relu")
  return [goal]


def main(argv=None):
  args = parse_args(argv)
  notes = set()
  jt, note = btb._import_jax_threshold()  # pylint: disable=protected-access
  if note:
    notes.add(note)
  import jax  # pylint: disable=g-import-not-at-top

  available = btb.available_implementations(jt)

  rng = np.random.default_rng(args.seed)
  x = jax.device_put(rng.standard_normal((args.batch, args.features[0]), dtype=np.float32))
  y = jax.device_put(rng.integers(0, args.features[-1], args.batch).astype(np.int32))
  make = make_linen_step if args.api == "linen" else make_nnx_step

  trainers, compiled = [], {}
  for name in args.activations:
    act = name.split(":")[-1]
    if act != "relu" and act not in available:
      notes.add(
        f"{name} skipped: " + ("no jax_threshold" if jt is None else btb.why_unavailable(jt, act))
      )
      continue
    step, state = make(args.features, act, (x, y), args.seed)
    trainers.append(Trainer(name, step, state))
    compiled[name] = describe_step(step.hlo())

  # Same function, same start: the first step's losses must agree.
  for t in trainers:
    t.run()
  losses = {t.name: float(t.last_loss) for t in trainers}
  if losses and max(losses.values()) - min(losses.values()) > 1e-4 * max(
    1.0, abs(next(iter(losses.values())))
  ):
    raise AssertionError(f"first-step losses disagree: {losses}")

  cases = [t.case() for t in trainers]
  samples, numbers = btb.time_interleaved(cases, args.repeats, args.min_sample_s)
  rows = []
  for c in cases:
    s = samples[c.name]
    rows.append(
      {
        "activation": c.name,
        "median_s": statistics.median(s),
        "p25_s": btb._quantile(s, 0.25),
        "p75_s": btb._quantile(s, 0.75),  # pylint: disable=protected-access
        "min_s": min(s),
        "samples_s": s,
        "steps_per_sample": numbers[c.name],
        "compiled": compiled[c.name],
      }
    )
  relu = next((r for r in rows if r["activation"] == "relu"), None)
  for r in rows:
    r["ratio_vs_relu"] = btb.time_ratio(r, relu)[0] if relu else None
  goals = evaluate_goals(rows)

  model = f"{args.api} {'-'.join(map(str, args.features))} batch {args.batch}"
  env = {
    "time": __import__("datetime").datetime.now().isoformat(timespec="seconds"),
    "jax": jax.__version__,
    "jax_backend": jax.default_backend(),
    "cpu_count": os.cpu_count(),
    "model": model,
    "repeats": args.repeats,
    "quick": args.quick,
    "first_step_losses": losses,
    "notes": sorted(notes),
  }
  try:
    import flax  # pylint: disable=g-import-not-at-top

    env["flax"] = flax.__version__
  except ImportError:
    pass
  if jt is not None:
    env["available_implementations"] = sorted(available)

  print(
    f"\nFlax training step, {model}, jax {jax.__version__}, "
    f"{args.repeats} interleaved repetitions (vs relu: paired time ratio, lower is faster)"
  )
  for n in sorted(notes):
    print(f"note: {n}")
  print(
    f"{'activation':<22} {'median ms':>10} {'IQR %':>6} {'vs relu':>8} {'steps':>6}  compiled step"
  )
  for r in rows:
    iqr = 100 * (r["p75_s"] - r["p25_s"]) / r["median_s"]
    ratio = f"{r['ratio_vs_relu']:.3f}" if r["ratio_vs_relu"] is not None else "-"
    c = r["compiled"]
    calls = sum(c["custom_calls"].values())
    print(
      f"{r['activation']:<22} {r['median_s'] * 1e3:>10.3f} {iqr:>6.1f} {ratio:>8} "
      f"{r['steps_per_sample']:>6}  {calls} custom calls, {c['fusions']} fusions, "
      f"{c['copies']} copies"
    )
  print(
    "\ngoals (this run)" + (" -- --quick: a smoke run, not a measurement:" if args.quick else ":")
  )
  print(btb.format_goals(goals))

  os.makedirs(args.out_dir, exist_ok=True)
  json_path = os.path.join(args.out_dir, "bench_flax_step.json")
  with open(json_path, "w") as f:
    json.dump(
      {"benchmark": "flax_step", "environment": env, "results": rows, "goals": goals}, f, indent=1
    )
  print(f"\nwrote {json_path}")
  if not args.no_plot:
    import plot  # pylint: disable=g-import-not-at-top

    for path in filter(None, [os.path.join(args.out_dir, "bench_flax_step.png"), args.plot]):
      if plot.plot_flax_step(json_path, path):
        print(f"wrote {path}")
  return 0


if __name__ == "__main__":
  sys.exit(main())
