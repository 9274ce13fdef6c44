"""Train the digits MLP of flax_mlp.py data-parallel across processes on one machine.

One command starts everything:

    python examples/data_parallel.py --processes 2 --devices-per-process 2

The launcher picks a free port on 127.0.0.1 and starts `--processes` workers, each with
`--devices-per-process` CPU devices. Every worker joins with `jax.distributed.initialize`
(gloo CPU collectives, loopback only), the global batch is sharded over all devices of
all processes, the model and optimizer state are replicated, and the thresholded
activations' backward pass runs through the threshold_backward custom call
(`--implementation ffi`), partitioned so that each device runs it on its own rows.
Worker 0 prints the loss per epoch, the test accuracy and the collectives in the
compiled training step (only the gradient all-reduce is expected).

The launcher then trains the same model on one device in one process with the same
global batches and checks that the final parameters match (see PARAMS_RTOL/ATOL).
Every wait is bounded: the distributed initialization (--timeout), the workers
(--timeout) and the launcher's join; a worker that fails or hangs stops the run
with a non-zero exit.

On real multi-host hardware (an Ascend server per host, or GPUs) the launcher is not
used: run one worker per host with `--worker --coordinator HOST0:PORT --process-id i
--processes N` (or let jax.distributed.initialize() detect the cluster), where HOST0's
address is reachable from every host; see the README, "Sharding and many hosts".
"""

import argparse
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

from flax import nnx
import jax
from jax.sharding import AxisType
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P
import numpy as np
import optax

import flax_mlp  # the model, loss, training step and data of the single-process example
import jax_threshold as jt

# Exact per-parameter agreement with the single-device run is not expected: the
# gradient is a mean over the global batch, which one device sums in one order and
# N devices sum as N partial sums plus an all-reduce, so the float32 rounding differs
# in the last bits and Adam carries those differences on. After a few epochs they
# stay far below these bounds (the run prints the measured maximum).
PARAMS_RTOL = 1e-4
PARAMS_ATOL = 1e-5
REQUIRED_ACCURACY = 0.9
_COLLECTIVES = ("all-gather", "all-to-all", "collective-permute", "all-reduce")


def _free_loopback_port() -> int:
  with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
    s.bind(("127.0.0.1", 0))
    return s.getsockname()[1]


def _parser():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--processes", type=int, default=2)
  parser.add_argument("--devices-per-process", type=int, default=2)
  parser.add_argument("--epochs", type=int, default=5)
  parser.add_argument("--batch-size", type=int, default=64, help="global batch size")
  parser.add_argument("--learning-rate", type=float, default=3e-3)
  parser.add_argument("--hidden", type=int, default=128)
  parser.add_argument("--implementation", default="ffi")
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument(
    "--timeout",
    type=int,
    default=240,
    help="seconds for the distributed initialization and for the workers",
  )
  # Set by the launcher (or by hand, one per host, on real multi-host hardware).
  parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
  parser.add_argument("--coordinator", help="HOST:PORT of process 0 (workers only)")
  parser.add_argument("--process-id", type=int, default=0)
  parser.add_argument("--params-out", help="worker 0 saves the final parameters here (.npz)")
  return parser


def _flat_params(model):
  """{path: numpy array} of the model's parameters (the process's local replica)."""
  leaves = jax.tree_util.tree_flatten_with_path(nnx.state(model, nnx.Param))[0]
  return {jax.tree_util.keystr(path): np.asarray(leaf.addressable_data(0)) for path, leaf in leaves}


def train(args, mesh=None, log=print):
  """Trains and returns (model, test accuracy, per-epoch losses, collectives in the step).

  mesh=None: one device. Otherwise the batch is sharded over the mesh's "data" axis and
  the model/optimizer state is replicated on it (global arrays, one replica per device).
  """
  x_train, x_test, y_train, y_test = flax_mlp.load_data(args.seed)
  model = flax_mlp.MLP(args.hidden, rngs=nnx.Rngs(args.seed))
  optimizer = nnx.Optimizer(model, optax.adam(args.learning_rate), wrt=nnx.Param)

  if mesh is None:
    put_batch = put_replicated = lambda a: a
  else:
    batch_sharding = NamedSharding(mesh, P("data"))
    replicated = NamedSharding(mesh, P())

    def put_replicated(a):
      a = np.asarray(a)
      return jax.make_array_from_callback(a.shape, replicated, lambda index: a[index])

    def put_batch(a):  # every process holds the whole global batch; keep its devices' rows
      a = np.asarray(a)
      return jax.make_array_from_callback(a.shape, batch_sharding, lambda index: a[index])

    for obj in (model, optimizer):
      nnx.update(obj, jax.tree.map(put_replicated, nnx.state(obj)))

  rng = np.random.default_rng(args.seed)
  steps_per_epoch = len(x_train) // args.batch_size
  x_test_g, y_test_g = put_replicated(x_test), put_replicated(y_test)
  losses, step_collectives = [], None
  with jt.implementation(args.implementation):
    for epoch in range(args.epochs):
      order = rng.permutation(len(x_train))
      epoch_loss = 0.0
      for i in range(steps_per_epoch):
        idx = order[i * args.batch_size : (i + 1) * args.batch_size]
        images, labels = put_batch(x_train[idx]), put_batch(y_train[idx])
        if step_collectives is None:
          hlo = flax_mlp.train_step.lower(model, optimizer, images, labels).compile().as_text()
          step_collectives = {
            "custom_call": "jax_threshold_threshold_backward" in hlo,
            "collectives": sorted(
              {c for c in _COLLECTIVES if re.search(rf"\s{c}(-start)?\(", hlo)}
            ),
          }
        epoch_loss += float(flax_mlp.train_step(model, optimizer, images, labels))
      losses.append(epoch_loss / steps_per_epoch)
      log(f"epoch {epoch + 1}: loss {losses[-1]:.4f}")
    test_acc = float(flax_mlp.accuracy(model, x_test_g, y_test_g))
  return model, test_acc, losses, step_collectives


def worker(args) -> int:
  jax.config.update("jax_cpu_collectives_implementation", "gloo")
  jax.distributed.initialize(
    coordinator_address=args.coordinator,
    num_processes=args.processes,
    process_id=args.process_id,
    initialization_timeout=args.timeout,
    coordinator_bind_address=args.coordinator,
  )
  try:
    me = jax.process_index()
    log = (lambda s: print(s, flush=True)) if me == 0 else (lambda s: None)
    devices = jax.devices()
    # Auto axes: XLA propagates the batch sharding through the model (optax's integer-label
    # loss has no Explicit-mode sharding rule in every supported jax).
    mesh = jax.make_mesh((len(devices),), ("data",), axis_types=(AxisType.Auto,), devices=devices)
    if args.batch_size % len(devices):
      raise SystemExit(
        f"--batch-size {args.batch_size} is not a multiple of the {len(devices)} devices"
      )
    log(
      f"{jax.process_count()} processes, {len(devices)} devices "
      f"({jax.local_device_count()} per process), global batch {args.batch_size}"
    )
    model, test_acc, _, step = train(args, mesh, log)
    log(f"training step: custom call {step['custom_call']}, collectives {step['collectives']}")
    log(f"test accuracy: {test_acc:.4f}")
    if me == 0 and args.params_out:
      np.savez(args.params_out, **_flat_params(model))
  finally:
    jax.distributed.shutdown()
  return 0


def launch(args) -> int:
  """Starts the workers on a free loopback port, waits (bounded), then checks the result."""
  port = _free_loopback_port()
  env = dict(os.environ)
  env["JAX_PLATFORMS"] = "cpu"
  env["XLA_FLAGS"] = (
    env.get("XLA_FLAGS", "") + f" --xla_force_host_platform_device_count={args.devices_per_process}"
  )
  with tempfile.TemporaryDirectory() as tmp:
    params_path = os.path.join(tmp, "params.npz")
    common = [
      sys.executable,
      os.path.abspath(__file__),
      "--worker",
      "--coordinator",
      f"127.0.0.1:{port}",
      "--processes",
      str(args.processes),
      "--epochs",
      str(args.epochs),
      "--batch-size",
      str(args.batch_size),
      "--learning-rate",
      str(args.learning_rate),
      "--hidden",
      str(args.hidden),
      "--implementation",
      args.implementation,
      "--seed",
      str(args.seed),
      "--timeout",
      str(args.timeout),
      "--params-out",
      params_path,
    ]
    procs = [
      subprocess.Popen(common + ["--process-id", str(i)], env=env) for i in range(args.processes)
    ]
    deadline = time.monotonic() + args.timeout
    try:
      # Poll, so that one failed worker stops the run at once instead of leaving the
      # others waiting for it in a collective until their own timeouts.
      while any(p.poll() is None for p in procs):
        if any(p.poll() for p in procs) or time.monotonic() > deadline:
          break
        time.sleep(0.2)
    finally:
      for proc in procs:
        if proc.poll() is None:
          proc.kill()
        proc.wait(timeout=30)
    codes = [p.returncode for p in procs]
    if any(codes):
      print(
        f"FAILED: worker exit codes {codes} (negative: killed; the run is bounded by "
        f"--timeout {args.timeout} s)",
        file=sys.stderr,
      )
      return 1

    with np.load(params_path) as f:
      distributed = dict(f)
  print("single-process run of the same global batches (one device):", flush=True)
  model, test_acc, _, _ = train(args, mesh=None, log=lambda s: print("  " + s, flush=True))
  single = _flat_params(model)
  worst = max(float(np.max(np.abs(distributed[k] - single[k]))) for k in single)
  identical = all(distributed[k].tobytes() == single[k].tobytes() for k in single)
  close = sorted(single) == sorted(distributed) and all(
    np.allclose(distributed[k], single[k], rtol=PARAMS_RTOL, atol=PARAMS_ATOL) for k in single
  )
  print(
    f"final parameters vs the single-process run: "
    f"{'bit-identical' if identical else f'max abs difference {worst:.3g}'}, "
    f"{'match' if close else 'DIFFER'} (rtol {PARAMS_RTOL}, atol {PARAMS_ATOL})"
  )
  if not close:
    return 1
  if test_acc < REQUIRED_ACCURACY:
    print(
      f"FAILED: single-process test accuracy {test_acc:.4f} < {REQUIRED_ACCURACY}", file=sys.stderr
    )
    return 1
  print("params match")
  return 0


def main(argv=None) -> int:
  args = _parser().parse_args(argv)
  if args.processes < 1 or args.devices_per_process < 1:
    raise SystemExit("--processes and --devices-per-process must be at least 1")
  if args.worker:
    return worker(args)
  return launch(args)


if __name__ == "__main__":
  sys.exit(main())
