"""Flax integration: jax_threshold.linen / jax_threshold.nnx and custom_vjp use.

Checks the modules compute `x if x > threshold else value`, compose inside
`nn.Sequential` / `nnx.Sequential`, differentiate through the
`threshold_backward` primitive under every available implementation, keep
Flax an optional dependency, and that a user's own `jax.custom_vjp`
activation built on `jt.threshold_backward` matches the built-in modules bit
for bit.
"""

import functools
import os
import subprocess
import sys
import textwrap
import unittest

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax.extend.core import subjaxprs
import jax.numpy as jnp
import numpy as np

import jax_threshold as jt

try:
  import flax.linen as nn
  from flax import nnx
  import optax
  from jax_threshold import linen as jt_linen
  from jax_threshold import nnx as jt_nnx
except ImportError:  # Flax is optional; the import-guard tests still run.
  nn = nnx = optax = jt_linen = jt_nnx = None

requires_flax = unittest.skipIf(nn is None, "needs the [flax] extra")

# "auto" (the platform's choice) plus every implementation this build has.
IMPLEMENTATIONS = ("auto",) + tuple(jt.available_implementations())
THRESHOLD, VALUE = 0.1, -0.5
# Inputs around the threshold: x == float32(0.1) must give VALUE (strict >).
X = np.array([[-2.0, -0.1, 0.0, np.float32(0.1), 0.1000001, 0.5, 3.0, -7.5]], np.float32)


def expected_forward(x, threshold, value):
  x = np.asarray(x, np.float32)
  return np.where(x > np.float32(threshold), x, np.float32(value))


def eqns_in(jaxpr):
  yield from jaxpr.eqns
  for sub in subjaxprs(jaxpr):
    yield from eqns_in(sub)


def threshold_backward_eqns(fn, *args):
  jaxpr = jax.make_jaxpr(fn)(*args).jaxpr
  return [e for e in eqns_in(jaxpr) if e.primitive is jt.threshold_backward_p]


def count_threshold_backward(fn, *args):
  return len(threshold_backward_eqns(fn, *args))


def implementations_used(fn, *args):
  """The `implementation` each threshold_backward in fn's jaxpr was bound with."""
  return {e.params["implementation"] for e in threshold_backward_eqns(fn, *args)}


def package_parent():
  return os.path.dirname(os.path.dirname(os.path.abspath(jt.__file__)))


def run_python(code):
  """Runs `code` in a fresh interpreter that imports the package under test."""
  env = dict(os.environ)
  env["PYTHONPATH"] = os.pathsep.join(
    [package_parent()] + [p for p in [env.get("PYTHONPATH")] if p]
  )
  return subprocess.run(
    [sys.executable, "-c", textwrap.dedent(code)],
    env=env,
    capture_output=True,
    text=True,
    timeout=120,
  )


# The documented custom_vjp pattern (docs/custom_vjp.md).
@functools.partial(jax.custom_vjp, nondiff_argnums=(1, 2))
def user_threshold(x, threshold, value):
  return jnp.where(x > threshold, x, jnp.asarray(value, x.dtype))


def _user_threshold_fwd(x, threshold, value):
  return user_threshold(x, threshold, value), x


def _user_threshold_bwd(threshold, value, x, grad_output):
  del value
  return (jt.threshold_backward(grad_output, x, threshold),)


user_threshold.defvjp(_user_threshold_fwd, _user_threshold_bwd)


def assert_trees_equal(test, a, b):
  test.assertEqual(jax.tree.structure(a), jax.tree.structure(b))
  for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)):
    np.testing.assert_array_equal(np.asarray(x, np.float32), np.asarray(y, np.float32))


class FlaxIsOptionalTest(absltest.TestCase):
  def test_import_jax_threshold_does_not_import_flax(self):
    result = run_python("""
        import sys
        import jax_threshold
        assert 'flax' not in sys.modules, sorted(
            m for m in sys.modules if m.startswith('flax'))
        """)
    self.assertEqual(result.returncode, 0, result.stderr)

  def test_missing_flax_names_the_extra(self):
    for module in ("jax_threshold.linen", "jax_threshold.nnx"):
      with self.subTest(module=module):
        # A None entry in sys.modules makes `import flax` raise ImportError,
        # exactly as if Flax were not installed.
        result = run_python(f"""
            import sys
            sys.modules['flax'] = None
            try:
              import {module}
            except ImportError as e:
              print(e)
            else:
              raise SystemExit('import {module} succeeded without flax')
            """)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("pip install 'jax-threshold[flax]'", result.stdout)
        self.assertIn(module, result.stdout)


@requires_flax
class LinenThresholdTest(parameterized.TestCase):
  def test_forward(self):
    out = jt_linen.Threshold(THRESHOLD, VALUE).apply({}, jnp.asarray(X))
    np.testing.assert_array_equal(out, expected_forward(X, THRESHOLD, VALUE))

  def test_has_no_parameters(self):
    variables = jt_linen.Threshold(THRESHOLD, VALUE).init(jax.random.key(0), jnp.asarray(X))
    self.assertEmpty(jax.tree.leaves(variables))

  def test_inside_sequential(self):
    model = nn.Sequential([nn.Dense(5), jt_linen.Threshold(THRESHOLD, VALUE), nn.Dense(3)])
    params = model.init(jax.random.key(0), X)["params"]
    w0, b0 = params["layers_0"]["kernel"], params["layers_0"]["bias"]
    w2, b2 = params["layers_2"]["kernel"], params["layers_2"]["bias"]
    hidden = expected_forward(X @ w0 + b0, THRESHOLD, VALUE)
    np.testing.assert_allclose(
      model.apply({"params": params}, X), hidden @ w2 + b2, rtol=1e-5, atol=1e-6
    )

  @parameterized.named_parameters(*((n, n) for n in IMPLEMENTATIONS))
  def test_grad_goes_through_primitive(self, implementation):
    model = nn.Sequential(
      [
        nn.Dense(6),
        jt_linen.Threshold(THRESHOLD, VALUE, implementation=implementation),
        nn.Dense(6),
        jt_linen.Threshold(0.0, 0.0, implementation=implementation),
        nn.Dense(2),
      ]
    )
    variables = model.init(jax.random.key(1), X)
    loss = lambda v, x: jnp.sum(model.apply(v, x) ** 2)
    self.assertEqual(count_threshold_backward(jax.grad(loss), variables, X), 2)
    self.assertEqual(count_threshold_backward(jax.grad(loss, argnums=1), variables, X), 2)

  @parameterized.named_parameters(*((n, n) for n in IMPLEMENTATIONS))
  def test_input_grad(self, implementation):
    layer = jt_linen.Threshold(THRESHOLD, VALUE, implementation=implementation)
    g = np.linspace(-3, 3, X.size, dtype=np.float32).reshape(X.shape)
    dx = jax.jit(jax.grad(lambda x: jnp.sum(layer.apply({}, x) * g)))(X)
    np.testing.assert_array_equal(dx, np.where(X > np.float32(THRESHOLD), g, 0))

  @parameterized.named_parameters(*((n, n) for n in IMPLEMENTATIONS))
  def test_implementation_attribute_reaches_primitive(self, implementation):
    layer = jt_linen.Threshold(THRESHOLD, VALUE, implementation=implementation)
    grad = jax.grad(lambda x: jnp.sum(layer.apply({}, x)))
    # The attribute wins over the enclosing block's default.
    other = "reference" if implementation != "reference" else "auto"
    with jt.implementation(other):
      self.assertEqual(implementations_used(grad, X), {implementation})

  @parameterized.named_parameters(*((n, n) for n in IMPLEMENTATIONS))
  def test_no_attribute_follows_context(self, implementation):
    layer = jt_linen.Threshold(THRESHOLD, VALUE)
    grad = jax.grad(lambda x: jnp.sum(layer.apply({}, x)))
    with jt.implementation(implementation):
      self.assertEqual(implementations_used(grad, X), {implementation})

  def test_unknown_implementation_is_rejected(self):
    layer = jt_linen.Threshold(THRESHOLD, VALUE, implementation="no-such")
    with self.assertRaisesRegex(ValueError, "no-such"):
      layer.apply({}, X)

  @parameterized.parameters(True, False)
  def test_pytorch_inplace_is_accepted_and_changes_nothing(self, inplace):
    # torch.nn.Threshold(0.1, 20, inplace=True) ports verbatim; JAX arrays are immutable.
    x = jnp.asarray(X)
    out = jax.jit(jt_linen.Threshold(0.1, 20, inplace=inplace).apply)({}, x)
    np.testing.assert_array_equal(out, expected_forward(X, 0.1, 20))
    np.testing.assert_array_equal(x, X)  # the input is untouched


@requires_flax
class NnxThresholdTest(parameterized.TestCase):
  def test_forward(self):
    out = jt_nnx.Threshold(THRESHOLD, VALUE)(jnp.asarray(X))
    np.testing.assert_array_equal(out, expected_forward(X, THRESHOLD, VALUE))

  def test_has_no_state(self):
    _, state = nnx.split(jt_nnx.Threshold(THRESHOLD, VALUE))
    self.assertEmpty(jax.tree.leaves(state))

  def test_pytorch_inplace_is_accepted_and_changes_nothing(self):
    x = jnp.asarray(X)
    for layer in (
      jt_nnx.Threshold(0.1, 20, inplace=True),
      jt_nnx.Threshold(0.1, 20, True),
      jt_nnx.Threshold(0.1, 20, inplace=False),
    ):
      np.testing.assert_array_equal(
        nnx.jit(lambda m, x: m(x))(layer, x), expected_forward(X, 0.1, 20)
      )
      _, state = nnx.split(layer)
      self.assertEmpty(jax.tree.leaves(state))
    np.testing.assert_array_equal(x, X)

  def test_inside_sequential(self):
    rngs = nnx.Rngs(0)
    first, last = nnx.Linear(8, 5, rngs=rngs), nnx.Linear(5, 3, rngs=rngs)
    model = nnx.Sequential(first, jt_nnx.Threshold(THRESHOLD, VALUE), last)
    hidden = expected_forward(X @ first.kernel[...] + first.bias[...], THRESHOLD, VALUE)
    np.testing.assert_allclose(
      model(X), hidden @ last.kernel[...] + last.bias[...], rtol=1e-5, atol=1e-6
    )

  @parameterized.named_parameters(*((n, n) for n in IMPLEMENTATIONS))
  def test_grad_goes_through_primitive(self, implementation):
    rngs = nnx.Rngs(1)
    model = nnx.Sequential(
      nnx.Linear(8, 6, rngs=rngs),
      jt_nnx.Threshold(THRESHOLD, VALUE, implementation=implementation),
      nnx.Linear(6, 6, rngs=rngs),
      jt_nnx.Threshold(0.0, 0.0, implementation=implementation),
      nnx.Linear(6, 2, rngs=rngs),
    )
    graphdef, params = nnx.split(model, nnx.Param)

    def loss(params, x):
      return jnp.sum(nnx.merge(graphdef, params)(x) ** 2)

    self.assertEqual(count_threshold_backward(jax.grad(loss), params, X), 2)

  @parameterized.named_parameters(*((n, n) for n in IMPLEMENTATIONS))
  def test_input_grad(self, implementation):
    layer = jt_nnx.Threshold(THRESHOLD, VALUE, implementation=implementation)
    g = np.linspace(-3, 3, X.size, dtype=np.float32).reshape(X.shape)
    dx = nnx.jit(nnx.grad(lambda x: jnp.sum(layer(x) * g)))(X)
    np.testing.assert_array_equal(dx, np.where(X > np.float32(THRESHOLD), g, 0))

  @parameterized.named_parameters(*((n, n) for n in IMPLEMENTATIONS))
  def test_implementation_attribute_reaches_primitive(self, implementation):
    layer = jt_nnx.Threshold(THRESHOLD, VALUE, implementation=implementation)
    grad = jax.grad(lambda x: jnp.sum(layer(x)))
    other = "reference" if implementation != "reference" else "auto"
    with jt.implementation(other):
      self.assertEqual(implementations_used(grad, X), {implementation})
    with jt.implementation(implementation):
      self.assertEqual(
        implementations_used(jax.grad(lambda x: jnp.sum(jt_nnx.Threshold(THRESHOLD, VALUE)(x))), X),
        {implementation},
      )

  def test_unknown_implementation_is_rejected(self):
    layer = jt_nnx.Threshold(THRESHOLD, VALUE, implementation="no-such")
    with self.assertRaisesRegex(ValueError, "no-such"):
      layer(X)

  def test_optimizer_step(self):
    # The train-step idiom of examples/flax_mlp.py, on both supported Flax
    # versions: nnx.Optimizer(model, tx, wrt=...) and update(model, grads).
    rngs = nnx.Rngs(2)
    model = nnx.Sequential(
      nnx.Linear(8, 16, rngs=rngs), jt_nnx.Threshold(0.0, 0.0), nnx.Linear(16, 1, rngs=rngs)
    )
    optimizer = nnx.Optimizer(model, optax.sgd(0.05), wrt=nnx.Param)
    x = jax.random.normal(jax.random.key(3), (32, 8))
    y = jnp.sum(x, axis=1, keepdims=True)
    loss_fn = lambda m: jnp.mean((m(x) - y) ** 2)

    @nnx.jit
    def step(model, optimizer):
      loss, grads = nnx.value_and_grad(loss_fn)(model)
      optimizer.update(model, grads)
      return loss

    first = float(step(model, optimizer))
    for _ in range(20):
      last = float(step(model, optimizer))
    self.assertLess(last, first)


class UserThreshold(nn.Module if nn is not None else object):
  threshold: float
  value: float

  def __call__(self, x):
    return user_threshold(x, self.threshold, self.value)


@requires_flax
class CustomVjpTest(parameterized.TestCase):
  """A user's custom_vjp activation on jt.threshold_backward == the modules."""

  @parameterized.product(implementation=IMPLEMENTATIONS, dtype=[jnp.float32, jnp.bfloat16])
  def test_linen_model_matches_builtin(self, implementation, dtype):
    # 0.5 is exact in bfloat16, so the user's comparison (in the input dtype)
    # and the built-in one (in float32, docs/behaviour.md §1) classify alike.
    def mlp(activation):
      return nn.Sequential(
        [
          nn.Dense(16, dtype=dtype),
          activation(0.5, 0.0),
          nn.Dense(16, dtype=dtype),
          activation(0.0, 0.0),
          nn.Dense(3, dtype=dtype),
        ]
      )

    builtin, custom = mlp(jt_linen.Threshold), mlp(UserThreshold)
    x = jax.random.normal(jax.random.key(4), (8, 12)).astype(dtype)
    params = builtin.init(jax.random.key(5), x)
    loss = lambda m: lambda p, x: jnp.sum(m.apply(p, x).astype(jnp.float32) ** 2)
    with jt.implementation(implementation):
      assert_trees_equal(self, jax.jit(builtin.apply)(params, x), jax.jit(custom.apply)(params, x))
      assert_trees_equal(
        self,
        jax.jit(jax.grad(loss(builtin), argnums=(0, 1)))(params, x),
        jax.jit(jax.grad(loss(custom), argnums=(0, 1)))(params, x),
      )
      self.assertEqual(count_threshold_backward(jax.grad(loss(custom)), params, x), 2)
      # The backward rule's implementation=None follows the enclosing block.
      self.assertEqual(implementations_used(jax.grad(loss(custom)), params, x), {implementation})

  @parameterized.named_parameters(*((n, n) for n in IMPLEMENTATIONS))
  def test_nnx_model_matches_builtin(self, implementation):
    class UserNnxThreshold(nnx.Module):
      def __call__(self, x):
        return user_threshold(x, THRESHOLD, VALUE)

    def mlp(activation):
      rngs = nnx.Rngs(6)  # Same seed: same initial weights in both models.
      return nnx.Sequential(nnx.Linear(8, 16, rngs=rngs), activation, nnx.Linear(16, 3, rngs=rngs))

    builtin = mlp(jt_nnx.Threshold(THRESHOLD, VALUE))
    custom = mlp(UserNnxThreshold())
    loss = lambda m: jnp.sum(m(X) ** 2)
    with jt.implementation(implementation):
      assert_trees_equal(self, builtin(X), custom(X))
      grads_builtin = nnx.jit(nnx.grad(loss))(builtin)
      grads_custom = nnx.jit(nnx.grad(loss))(custom)
    assert_trees_equal(
      self, nnx.state(grads_builtin, nnx.Param), nnx.state(grads_custom, nnx.Param)
    )

  def test_vmap_of_custom_vjp_grad(self):
    # Per-example gradients: the backward rule's primitive is batched.
    x = jax.random.normal(jax.random.key(7), (5, 8))
    g_user = jax.vmap(jax.grad(lambda v: jnp.sum(user_threshold(v, THRESHOLD, VALUE) ** 2)))(x)
    g_builtin = jax.vmap(jax.grad(lambda v: jnp.sum(jt.threshold(v, THRESHOLD, VALUE) ** 2)))(x)
    np.testing.assert_array_equal(g_user, g_builtin)
    np.testing.assert_array_equal(g_user, np.where(x > np.float32(THRESHOLD), 2 * x, 0))


if __name__ == "__main__":
  absltest.main()
