"""Per-example gradients of a small MLP: `vmap(grad)` against a Python loop.

`jax.vmap(jax.grad(loss))` batches the `threshold_backward` primitive with its
batching rule, so one compiled call gives every example's gradient. The same
gradients computed one example at a time in a Python loop must agree; the
script asserts that and prints both timings (compile time excluded).

    python examples/per_example_grads.py [--batch 128] [--implementation auto]
"""

import argparse
import sys
import time

import jax
from jax.extend.core import subjaxprs
import jax.numpy as jnp
import numpy as np

import jax_threshold as jt

# "auto" picks the FFI kernels when the native extension is built.
IMPLEMENTATIONS = ("auto",) + tuple(jt.available_implementations())
THRESHOLD, VALUE = 0.1, 0.0


def init_mlp(key, sizes):
  params = []
  for k, (fan_in, fan_out) in zip(
    jax.random.split(key, len(sizes) - 1), zip(sizes[:-1], sizes[1:])
  ):
    w = jax.random.normal(k, (fan_in, fan_out), jnp.float32) / np.sqrt(fan_in)
    params.append({"w": w, "b": jnp.zeros((fan_out,), jnp.float32)})
  return params


def mlp(params, x):
  for layer in params[:-1]:
    x = jt.threshold(x @ layer["w"] + layer["b"], THRESHOLD, VALUE)
  return x @ params[-1]["w"] + params[-1]["b"]


def loss(params, x, y):
  """Squared error of ONE example (x: [features], y: [outputs])."""
  return jnp.sum((mlp(params, x) - y) ** 2)


def primitives_in(jaxpr):
  for eqn in jaxpr.eqns:
    yield eqn.primitive
  for sub in subjaxprs(jaxpr):
    yield from primitives_in(sub)


def grad_contains_primitive(params, x, y):
  jaxpr = jax.make_jaxpr(jax.vmap(jax.grad(loss), (None, 0, 0)))(params, x, y)
  return jt.threshold_backward_p in set(primitives_in(jaxpr.jaxpr))


def timed(fn, repeats):
  jax.block_until_ready(fn())  # Compile (and warm up) outside the timing.
  start = time.perf_counter()
  for _ in range(repeats):
    out = jax.block_until_ready(fn())
  return out, (time.perf_counter() - start) / repeats


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--batch", type=int, default=128)
  parser.add_argument("--features", type=int, default=32)
  parser.add_argument("--hidden", type=int, default=64)
  parser.add_argument("--repeats", type=int, default=3)
  parser.add_argument("--implementation", default="auto", choices=IMPLEMENTATIONS)
  parser.add_argument("--seed", type=int, default=0)
  args = parser.parse_args(argv)

  k_params, k_x, k_y = jax.random.split(jax.random.key(args.seed), 3)
  params = init_mlp(k_params, [args.features, args.hidden, args.hidden, 4])
  x = jax.random.normal(k_x, (args.batch, args.features), jnp.float32)
  y = jax.random.normal(k_y, (args.batch, 4), jnp.float32)

  with jt.implementation(args.implementation):
    per_example_grad = jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)))
    one_grad = jax.jit(jax.grad(loss))
    vmapped, t_vmap = timed(lambda: per_example_grad(params, x, y), args.repeats)

    def python_loop():
      grads = [one_grad(params, x[i], y[i]) for i in range(args.batch)]
      return jax.tree.map(lambda *g: jnp.stack(g), *grads)

    looped, t_loop = timed(python_loop, args.repeats)
    uses_primitive = grad_contains_primitive(params, x, y)

  # A batched matmul may sum in another order than the unbatched one, so the
  # two agree to float32 rounding rather than bit for bit.
  jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6), vmapped, looped)
  max_diff = max(
    float(jnp.max(jnp.abs(a - b)))
    for a, b in zip(jax.tree.leaves(vmapped), jax.tree.leaves(looped))
  )
  shapes = [tuple(g.shape) for g in jax.tree.leaves(vmapped)]

  print(f"implementation: {args.implementation}")
  print(f"per-example gradient shapes: {shapes}")
  print(f"grad jaxpr uses threshold_backward: {uses_primitive}")
  print(f"vmap(grad):  {t_vmap * 1e3:9.3f} ms for {args.batch} examples")
  print(
    f"Python loop: {t_loop * 1e3:9.3f} ms for {args.batch} examples ({t_loop / t_vmap:.1f}x slower)"
  )
  print(f"max |vmap - loop| = {max_diff:.3g}: gradients match")
  if not uses_primitive:
    print("FAILED: the gradient does not go through threshold_backward", file=sys.stderr)
    return 1
  return 0


if __name__ == "__main__":
  sys.exit(main())
