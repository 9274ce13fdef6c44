"""Train a Flax NNX MLP with the threshold activation on scikit-learn's digits.

The 8x8 digits data set ships with scikit-learn (no download). The hidden
layers use `jax_threshold.nnx.Threshold`, so every backward pass goes through
the `threshold_backward` primitive and the lowering chosen by
`--implementation`. Prints the final test accuracy, saves a plot of the
training curves, and exits non-zero when the accuracy is below 0.95.

    python examples/flax_mlp.py [--epochs 30] [--implementation auto]
                                [--seed 0] [--plot examples/flax_mlp.png]
"""

import argparse
import os
import sys
import time

import jax
import jax.numpy as jnp
import matplotlib

matplotlib.use("Agg")  # Headless: CI has no display.
import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top
import numpy as np
import optax
from flax import nnx
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from tqdm import tqdm

import jax_threshold as jt
from jax_threshold.nnx import Threshold

# "auto" picks the FFI kernels when the native extension is built.
IMPLEMENTATIONS = ("auto",) + tuple(jt.available_implementations())
REQUIRED_ACCURACY = 0.95


class MLP(nnx.Module):
  """64 -> hidden -> hidden -> 10, thresholded hidden activations."""

  def __init__(self, hidden: int, *, rngs: nnx.Rngs):
    self.layers = nnx.Sequential(
      nnx.Linear(64, hidden, rngs=rngs),
      Threshold(0.1, 0.0),
      nnx.Linear(hidden, hidden, rngs=rngs),
      Threshold(0.1, 0.0),
      nnx.Linear(hidden, 10, rngs=rngs),
    )

  def __call__(self, x):
    return self.layers(x)


def loss_fn(model, images, labels):
  logits = model(images)
  return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()


@nnx.jit
def train_step(model, optimizer, images, labels):
  loss, grads = nnx.value_and_grad(loss_fn)(model, images, labels)
  optimizer.update(model, grads)
  return loss


@nnx.jit
def accuracy(model, images, labels):
  return jnp.mean(jnp.argmax(model(images), axis=-1) == labels)


def load_data(seed):
  digits = load_digits()
  images = (digits.data / 16.0).astype(np.float32)  # Pixels are 0..16.
  labels = digits.target.astype(np.int32)
  return train_test_split(images, labels, test_size=0.2, random_state=seed, stratify=labels)


def plot_curves(path, step_losses, steps_per_epoch, train_acc, test_acc):
  fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(8, 3), dpi=80)
  steps = np.arange(1, len(step_losses) + 1) / steps_per_epoch
  ax_loss.plot(steps, step_losses, lw=0.8)
  ax_loss.set(xlabel="epoch", ylabel="training loss", yscale="log", title="loss")
  epochs = np.arange(1, len(test_acc) + 1)
  ax_acc.plot(epochs, train_acc, label="train")
  ax_acc.plot(epochs, test_acc, label="test")
  ax_acc.axhline(REQUIRED_ACCURACY, color="grey", ls=":", lw=0.8)
  ax_acc.set(xlabel="epoch", ylabel="accuracy", ylim=(0.8, 1.0), title="accuracy")
  ax_acc.legend(loc="lower right")
  fig.tight_layout()
  os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
  fig.savefig(path)
  plt.close(fig)


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--epochs", type=int, default=30)
  parser.add_argument("--batch-size", type=int, default=64)
  parser.add_argument("--learning-rate", type=float, default=3e-3)
  parser.add_argument("--hidden", type=int, default=128)
  parser.add_argument("--implementation", default="auto", choices=IMPLEMENTATIONS)
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument(
    "--plot",
    default=os.path.join(os.path.dirname(__file__), "flax_mlp.png"),
    help="where to save the loss/accuracy plot (PNG)",
  )
  args = parser.parse_args(argv)

  x_train, x_test, y_train, y_test = load_data(args.seed)
  model = MLP(args.hidden, rngs=nnx.Rngs(args.seed))
  optimizer = nnx.Optimizer(model, optax.adam(args.learning_rate), wrt=nnx.Param)
  rng = np.random.default_rng(args.seed)
  steps_per_epoch = len(x_train) // args.batch_size  # Drop the ragged batch.

  step_losses, train_acc, test_acc = [], [], []
  start = time.perf_counter()
  # Traced and lowered inside the context, so every step uses that lowering.
  with jt.implementation(args.implementation):
    progress = tqdm(range(args.epochs), desc="training", unit="epoch")
    for _ in progress:
      order = rng.permutation(len(x_train))
      for i in range(steps_per_epoch):
        idx = order[i * args.batch_size : (i + 1) * args.batch_size]
        step_losses.append(train_step(model, optimizer, x_train[idx], y_train[idx]))
      train_acc.append(float(accuracy(model, x_train, y_train)))
      test_acc.append(float(accuracy(model, x_test, y_test)))
      progress.set_postfix(loss=f"{float(step_losses[-1]):.4f}", test_acc=f"{test_acc[-1]:.4f}")
  elapsed = time.perf_counter() - start
  step_losses = np.asarray(jax.device_get(step_losses))

  plot_curves(args.plot, step_losses, steps_per_epoch, train_acc, test_acc)
  print(f"implementation: {args.implementation}")
  print(f"trained {args.epochs} epochs in {elapsed:.1f} s")
  print(f"final training loss: {step_losses[-steps_per_epoch:].mean():.4f}")
  print(f"saved plot: {args.plot}")
  print(f"test accuracy: {test_acc[-1]:.4f}")
  if test_acc[-1] < REQUIRED_ACCURACY:
    print(f"FAILED: test accuracy {test_acc[-1]:.4f} < {REQUIRED_ACCURACY}", file=sys.stderr)
    return 1
  return 0


if __name__ == "__main__":
  sys.exit(main())
