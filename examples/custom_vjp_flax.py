"""Your own `jax.custom_vjp` activation, with `jt.threshold_backward` as its backward.

`jax_threshold.linen.Threshold` is the ready-made module. When you write the
forward pass yourself (to fuse it, quantise it, or log it) but want the
`threshold_backward` primitive -- and its FFI kernels -- for the gradient, put
`jt.threshold_backward` in the custom_vjp's backward rule. This script builds
the same Flax Linen MLP with both activations and checks that outputs,
gradients and a short SGD run agree bit for bit.

    python examples/custom_vjp_flax.py [--steps 20] [--implementation auto]
"""

import argparse
import functools
import sys

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import subjaxprs

import jax_threshold as jt
from jax_threshold.linen import Threshold

# "auto" picks the FFI kernels when the native extension is built.
IMPLEMENTATIONS = ("auto",) + tuple(jt.available_implementations())
THRESHOLD, VALUE = 0.1, 0.0


# --- The user's activation ---------------------------------------------------
# threshold and value are Python numbers fixed per layer: nondiff_argnums keeps
# them out of the differentiated arguments, the same as the built-in module.
@functools.partial(jax.custom_vjp, nondiff_argnums=(1, 2))
def my_threshold(x, threshold, value):
  return jnp.where(x > threshold, x, jnp.asarray(value, x.dtype))


def _my_threshold_fwd(x, threshold, value):
  return my_threshold(x, threshold, value), x  # Residual: the input itself.


def _my_threshold_bwd(threshold, value, x, grad_output):
  del value  # d out / d x does not depend on the replacement value.
  return (jt.threshold_backward(grad_output, x, threshold),)


my_threshold.defvjp(_my_threshold_fwd, _my_threshold_bwd)


class MyThreshold(nn.Module):
  threshold: float
  value: float

  def __call__(self, x):
    return my_threshold(x, self.threshold, self.value)


# ------------------------------------------------------------------------------


def make_mlp(activation):
  return nn.Sequential(
    [
      nn.Dense(64),
      activation(THRESHOLD, VALUE),
      nn.Dense(64),
      activation(THRESHOLD, VALUE),
      nn.Dense(4),
    ]
  )


def primitives_in(jaxpr):
  for eqn in jaxpr.eqns:
    yield eqn.primitive
  for sub in subjaxprs(jaxpr):
    yield from primitives_in(sub)


def assert_trees_equal(a, b, what):
  for (path, x), y in zip(jax.tree_util.tree_leaves_with_path(a), jax.tree.leaves(b)):
    np.testing.assert_array_equal(x, y, err_msg=f"{what} differ at {jax.tree_util.keystr(path)}")


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--steps", type=int, default=20)
  parser.add_argument("--batch", type=int, default=32)
  parser.add_argument("--learning-rate", type=float, default=0.05)
  parser.add_argument("--implementation", default="auto", choices=IMPLEMENTATIONS)
  parser.add_argument("--seed", type=int, default=0)
  args = parser.parse_args(argv)

  k_init, k_x, k_y = jax.random.split(jax.random.key(args.seed), 3)
  x = jax.random.normal(k_x, (args.batch, 16), jnp.float32)
  y = jax.random.normal(k_y, (args.batch, 4), jnp.float32)
  builtin, custom = make_mlp(Threshold), make_mlp(MyThreshold)
  params = builtin.init(k_init, x)  # Both models share these parameters.

  def loss_fn(model):
    return lambda p: jnp.mean((model.apply(p, x) - y) ** 2)

  def sgd(model):
    @jax.jit
    def step(p):
      loss, grads = jax.value_and_grad(loss_fn(model))(p)
      return jax.tree.map(lambda w, g: w - args.learning_rate * g, p, grads), loss

    return step

  with jt.implementation(args.implementation):
    out_builtin = jax.jit(builtin.apply)(params, x)
    out_custom = jax.jit(custom.apply)(params, x)
    grad_builtin = jax.jit(jax.grad(loss_fn(builtin)))(params)
    grad_custom = jax.jit(jax.grad(loss_fn(custom)))(params)
    grad_jaxpr = jax.make_jaxpr(jax.grad(loss_fn(custom)))(params)

    step_builtin, step_custom = sgd(builtin), sgd(custom)
    p_builtin = p_custom = params
    for _ in range(args.steps):
      p_builtin, loss_builtin = step_builtin(p_builtin)
      p_custom, loss_custom = step_custom(p_custom)

  n_backward = sum(p is jt.threshold_backward_p for p in primitives_in(grad_jaxpr.jaxpr))
  print(f"implementation: {args.implementation}")
  print(f"custom_vjp backward uses threshold_backward {n_backward} times")
  if n_backward != 2:
    print("FAILED: expected one threshold_backward per activation", file=sys.stderr)
    return 1
  assert_trees_equal(out_builtin, out_custom, "outputs")
  print("outputs:   bit-identical to jax_threshold.linen.Threshold")
  assert_trees_equal(grad_builtin, grad_custom, "gradients")
  print("gradients: bit-identical to jax_threshold.linen.Threshold")
  assert_trees_equal(p_builtin, p_custom, "trained parameters")
  print(
    f"after {args.steps} SGD steps: loss {float(loss_custom):.6f} (custom) "
    f"== {float(loss_builtin):.6f} (built-in), parameters bit-identical"
  )
  return 0


if __name__ == "__main__":
  sys.exit(main())
