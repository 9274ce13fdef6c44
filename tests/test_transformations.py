"""Transformations of threshold_backward and the threshold activation.

vmap (one bind per batch, any in_axes, nesting, batched thresholds), JVP and
transpose (check_grads to order 2, hessian, linear_transpose with broadcasting,
per-example gradients), Taylor series (jax.experimental.jet against the same
function built from jnp.where), and jit caching (no retrace for a new traced
threshold; a retrace for a new implementation block). Each test runs once per available
implementation (see implementations.py).
"""

import functools

from absl.testing import absltest
from absl.testing import parameterized
import jax
import jax.numpy as jnp
from jax.experimental import jet
from jax.test_util import check_grads
import numpy as np

import jax_threshold as jt
import dtype_lists
import implementations
import oracle


def _primitive_eqns(jaxpr):
  """Every equation in a (closed) jaxpr and its sub-jaxprs, recursively."""
  jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
  for eqn in jaxpr.eqns:
    yield eqn
    for param in eqn.params.values():
      for sub in param if isinstance(param, (tuple, list)) else (param,):
        if hasattr(sub, "eqns") or hasattr(sub, "jaxpr"):
          yield from _primitive_eqns(sub)


def _count(jaxpr, name):
  return sum(eqn.primitive.name == name for eqn in _primitive_eqns(jaxpr))


RNG = np.random.default_rng(42)
B = 3


def _normal(*shape):
  return RNG.standard_normal(shape).astype(np.float32)


@implementations.for_each_implementation
class BatchingTest(parameterized.TestCase):
  def assertOneBindNoLoop(self, fn, *args):
    jaxpr = jax.make_jaxpr(fn)(*args)
    self.assertEqual(_count(jaxpr, "threshold_backward"), 1, str(jaxpr))
    for loop in ("while", "scan"):
      self.assertEqual(_count(jaxpr, loop), 0, str(jaxpr))
    # the implementation block chose the param, unresolved
    self.assertIn(f"implementation={self.implementation}", str(jaxpr))

  # (grad_output shape, x shape, in_axes (g, x, t)); B=3 is the batch size.
  @parameterized.named_parameters(
    ("grad_only", (B, 4), (4,), (0, None, None)),
    ("x_only", (4,), (B, 4), (None, 0, None)),
    ("threshold_only", (4,), (4,), (None, None, 0)),
    ("all", (B, 4), (B, 4), (0, 0, 0)),
    ("axis1_and_axis0", (4, B), (B, 4), (1, 0, 0)),
    ("x_axis1_lower_rank_grad", (2, 4), (4, B), (None, 1, None)),
    ("lower_rank_batched_x", (2, 4), (B, 4), (None, 0, 0)),
    ("broadcast_inside", (B, 2, 1), (1, 5), (0, None, 0)),
    ("negative_axis", (2, B), (2, 1), (-1, None, None)),
  )
  def test_vmap_in_axes(self, g_shape, x_shape, in_axes):
    g, x = _normal(*g_shape), _normal(*x_shape)
    thresholds = np.array([-0.5, 0.0, 0.7], np.float32)
    t = thresholds if in_axes[2] is not None else np.float32(0.2)
    fn = jax.vmap(jt.threshold_backward, in_axes=in_axes)
    out = np.asarray(fn(g, x, t))
    take = lambda a, axis, i: a if axis is None else np.take(a, i, axis=axis)
    expected = np.stack(
      [
        oracle.threshold_backward(
          take(g, in_axes[0], i), take(x, in_axes[1], i), take(t, in_axes[2], i)
        )
        for i in range(B)
      ]
    )
    np.testing.assert_array_equal(out, expected)
    self.assertOneBindNoLoop(fn, g, x, t)

  def test_nested_vmap_with_batched_thresholds(self):
    g, x = _normal(2, 5), _normal(B, 5)
    thresholds = np.array([[-0.5, 0.1], [0.0, 0.3], [1.0, -2.0]], np.float32)  # [B, 2]
    inner = jax.vmap(jt.threshold_backward, in_axes=(0, None, 0))  # over g rows, thresholds[i]
    fn = jax.vmap(inner, in_axes=(None, 0, 0))  # over x rows, thresholds
    out = np.asarray(fn(g, x, thresholds))
    self.assertEqual(out.shape, (B, 2, 5))
    for i in range(B):
      for j in range(2):
        np.testing.assert_array_equal(
          out[i, j], oracle.threshold_backward(g[j], x[i], thresholds[i, j])
        )
    self.assertOneBindNoLoop(fn, g, x, thresholds)

  def test_nested_vmap_inner_threshold_outer_grad(self):
    # The inner vmap makes the threshold operand non-scalar; the outer one batches
    # only grad_output, so the threshold gets a leading 1.
    g, x = _normal(B, 2, 4), _normal(4)
    thresholds = np.array([-0.3, 0.4], np.float32)
    inner = jax.vmap(jt.threshold_backward, in_axes=(0, None, 0))
    fn = jax.vmap(inner, in_axes=(0, None, None))
    out = np.asarray(fn(g, x, thresholds))
    for i in range(B):
      for j in range(2):
        np.testing.assert_array_equal(
          out[i, j], oracle.threshold_backward(g[i, j], x, thresholds[j])
        )
    self.assertOneBindNoLoop(fn, g, x, thresholds)

  @parameterized.parameters(*dtype_lists.CANONICAL_INTEGERS)
  def test_vmap_thresholds_for_integer_x(self, dtype):
    info = np.iinfo(dtype)
    x = np.array(
      sorted(
        {
          info.min,
          info.min + 1,
          -1 % (info.max + 1) if info.min == 0 else -1,
          0,
          1,
          2,
          126,
          127,
          info.max,
        }
      ),
      dtype,
    )
    g = np.arange(1, x.size + 1).astype(dtype)
    for thresholds in (
      np.array([-300.0, -1.5, 0.0, 1.5, 126.5, 1e10, np.nan], np.float32),
      np.array([-300, -129, -1, 0, 2, 255, 1000], np.int32),
    ):
      out = np.asarray(jax.vmap(jt.threshold_backward, in_axes=(None, None, 0))(g, x, thresholds))
      expected = np.stack([oracle.threshold_backward(g, x, t) for t in thresholds])
      np.testing.assert_array_equal(out, expected)

  def test_vmap_of_the_activation_and_its_gradient(self):
    x = _normal(B, 6)
    thresholds = np.array([-0.2, 0.0, 0.5], np.float32)
    fwd = jax.vmap(lambda x, t: jt.threshold(x, t, -1.0))(x, thresholds)
    np.testing.assert_array_equal(
      fwd, np.stack([oracle.threshold(x[i], thresholds[i], -1.0) for i in range(B)])
    )
    grads = jax.vmap(jax.grad(lambda x, t: jt.threshold(x, t, -1.0).sum()))(x, thresholds)
    np.testing.assert_array_equal(
      grads, np.stack([(x[i] > thresholds[i]).astype(np.float32) for i in range(B)])
    )

  def test_per_example_gradients_of_an_mlp(self):
    k1, k2 = jax.random.split(jax.random.PRNGKey(0))
    params = {"w1": jax.random.normal(k1, (5, 8)) / 3, "w2": jax.random.normal(k2, (8, 2)) / 3}
    xs, ys = _normal(6, 5), _normal(6, 2)

    def loss(params, x, y):
      h = jt.threshold(x @ params["w1"], 0.1, -0.05)
      return jnp.sum((h @ params["w2"] - y) ** 2)

    batched = jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)))(params, xs, ys)
    for i in range(xs.shape[0]):
      single = jax.grad(loss)(params, xs[i], ys[i])
      for name in params:
        np.testing.assert_allclose(batched[name][i], single[name], rtol=1e-5, atol=1e-6)
    jaxpr = jax.make_jaxpr(jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)))(params, xs, ys)
    self.assertEqual(_count(jaxpr, "threshold_backward"), 1)


@implementations.for_each_implementation
class DifferentiationTest(parameterized.TestCase):
  def setUp(self):
    super().setUp()
    # Keep points away from the threshold so finite differences see no kink.
    self.x = np.array([[-1.5, -0.6, 0.4], [0.9, 1.7, -2.2]], np.float32)

  def test_check_grads_of_the_activation(self):
    f = lambda x, value: jt.threshold(x, 0.1, value)
    check_grads(f, (self.x, np.float32(-0.3)), order=2, modes=("fwd", "rev"), atol=1e-2, rtol=1e-2)

  def test_check_grads_of_threshold_backward(self):
    g = _normal(2, 3)
    check_grads(
      lambda g: jt.threshold_backward(g, self.x, 0.1),
      (g,),
      order=2,
      modes=("fwd", "rev"),
      atol=1e-2,
      rtol=1e-2,
    )
    # x only selects the mask, so its derivative is 0 (away from the threshold).
    check_grads(
      lambda x: jt.threshold_backward(g, x, 0.1),
      (self.x,),
      order=2,
      modes=("fwd", "rev"),
      atol=1e-2,
      rtol=1e-2,
    )

  def test_gradients_of_the_activation(self):
    g = _normal(2, 3)
    value, threshold = np.float32(-0.3), np.float32(0.1)
    f = lambda x, t, v: jnp.vdot(g, jt.threshold(x, t, v))
    dx, dt, dv = jax.grad(f, argnums=(0, 1, 2))(self.x, threshold, value)
    mask = self.x > threshold
    np.testing.assert_array_equal(dx, np.where(mask, g, 0))
    self.assertEqual(float(dt), 0.0)  # the threshold gets no gradient
    np.testing.assert_allclose(dv, g[~mask].sum(), rtol=1e-6)
    jaxpr = jax.make_jaxpr(jax.grad(f))(self.x, threshold, value)
    self.assertEqual(_count(jaxpr, "threshold_backward"), 1)

  def test_masked_cotangents_stay_zero_through_the_activation(self):
    g = np.array([[np.inf, np.nan, 1.0], [2.0, np.inf, -np.inf]], np.float32)
    _, vjp = jax.vjp(lambda x: jt.threshold(x, 0.1, -0.3), self.x)
    (dx,) = vjp(g)
    np.testing.assert_array_equal(dx, np.where(self.x > 0.1, g, 0))

  def test_a_value_without_gradient_keeps_only_x_for_the_backward(self):
    # What the backward keeps: the residual arrays of the VJP and the linearized jaxpr. With a
    # constant value (or one not differentiated) that is x, with no boolean mask beside it.
    x = self.x
    for name, f in [
      ("constant", lambda x: jt.threshold(x, 0.1, -0.3)),
      ("relu", lambda x: jt.threshold(x, 0.0, 0.0)),
      ("array", lambda x: jt.threshold(x, jnp.float32(0.1), jnp.float32(-0.3))),
      ("jit", jax.jit(lambda x: jt.threshold(x, 0.1, -0.3))),
    ]:
      with self.subTest(name):
        _, vjp = jax.vjp(f, x)
        arrays = [a for a in jax.tree_util.tree_leaves(vjp) if np.ndim(a)]
        self.assertLen(arrays, 1)
        np.testing.assert_array_equal(arrays[0], x)
        _, linear = jax.linearize(f, x)
        self.assertNotIn("bool", str(jax.make_jaxpr(linear)(x)))
    # A value with a gradient needs where x does not pass; scalars aside, x and the mask.
    _, vjp = jax.vjp(lambda x, v: jt.threshold(x, 0.1, v), x, np.float32(-0.3))
    dtypes = sorted(str(a.dtype) for a in jax.tree_util.tree_leaves(vjp) if np.ndim(a))
    self.assertEqual(dtypes, ["bool", "float32"])

  def test_a_value_without_gradient_gives_the_primitives_bits(self):
    # Where x does not pass the primitive gives +0, whatever the cotangent (-0, inf, NaN).
    x = np.array([[-1.5, 0.1, np.nan, -0.0], [0.9, 1e-40, 0.10000001, 2.0]], np.float32)
    g = np.array([[np.inf, np.nan, -0.0, 1.0], [-0.0, np.nan, -np.inf, 3.0]], np.float32)
    want = oracle.threshold_backward(g, x, 0.1).view(np.uint32)
    for value in (-0.3, jnp.float32(-0.3)):
      f = functools.partial(jt.threshold, threshold=0.1, value=value)
      (dx,) = jax.vjp(f, x)[1](g)
      np.testing.assert_array_equal(np.asarray(dx).view(np.uint32), want)
      dx_rows = jax.vmap(lambda x, g, f=f: jax.vjp(f, x)[1](g)[0])(x, g)
      np.testing.assert_array_equal(np.asarray(dx_rows).view(np.uint32), want)
    dx, dv = jax.vjp(lambda x, v: jt.threshold(x, 0.1, v), x, np.float32(-0.3))[1](g)
    np.testing.assert_array_equal(np.asarray(dx).view(np.uint32), want)
    np.testing.assert_array_equal(dv, np.sum(np.where(x > 0.1, 0, g), dtype=np.float32))

  def test_hessian(self):
    x = self.x[0]
    f = lambda x: jnp.sum(jt.threshold(x, 0.1, -0.3) ** 2)
    expected = np.diag(np.where(x > 0.1, 2.0, 0.0)).astype(np.float32)
    np.testing.assert_allclose(jax.hessian(f)(x), expected)
    np.testing.assert_allclose(jax.jacrev(jax.jacfwd(f))(x), expected)  # reverse over forward
    f_value = lambda v: jnp.sum(jt.threshold(x, 0.1, v) ** 2)
    np.testing.assert_allclose(jax.hessian(f_value)(np.float32(0.5)), 2.0 * np.sum(x <= 0.1))

  def test_jvp_is_linear_in_grad_output_only(self):
    g, g_dot, x_dot = _normal(2, 3), _normal(2, 3), _normal(2, 3)
    out, out_dot = jax.jvp(
      lambda g, x: jt.threshold_backward(g, x, 0.1), (g, self.x), (g_dot, x_dot)
    )
    np.testing.assert_array_equal(out, oracle.threshold_backward(g, self.x, 0.1))
    np.testing.assert_array_equal(out_dot, oracle.threshold_backward(g_dot, self.x, 0.1))
    _, x_only = jax.jvp(lambda x: jt.threshold_backward(g, x, 0.1), (self.x,), (x_dot,))
    np.testing.assert_array_equal(x_only, np.zeros_like(x_only))

  @parameterized.named_parameters(
    ("same_shape", (2, 3), lambda m: m),
    ("column", (2, 1), lambda m: m.sum(axis=1, keepdims=True)),
    ("row", (3,), lambda m: m.sum(axis=0)),
    ("scalar", (), lambda m: m.sum()),
    ("leading_one", (1, 3), lambda m: m.sum(axis=0, keepdims=True)),
  )
  def test_linear_transpose_sums_over_broadcast_dims(self, g_shape, reduce_masked):
    t = 0.1
    f = lambda g: jt.threshold_backward(g, self.x, t)
    ct = _normal(2, 3)
    (g_ct,) = jax.linear_transpose(f, jax.ShapeDtypeStruct(g_shape, np.float32))(ct)
    expected = reduce_masked(np.where(self.x > t, ct, 0))
    self.assertEqual(g_ct.shape, g_shape)
    np.testing.assert_allclose(g_ct, expected, rtol=1e-6)
    # And the same through grad of a broadcasting use.
    dg = jax.grad(lambda g: jnp.vdot(ct, jt.threshold_backward(g, self.x, t)))(
      np.ones(g_shape, np.float32)
    )
    np.testing.assert_allclose(dg, expected, rtol=1e-6)


@implementations.for_each_implementation
class JetTest(parameterized.TestCase):
  """jet: linear in grad_output (each term through the primitive), zero in x and threshold."""

  X = np.array(
    [[-1.0, 0.25, 0.5, 0.75, 2.0, np.nan], [3.0, -0.5, 0.5, 1e-3, 0.6, -np.inf]], np.float32
  )
  G = np.linspace(0.1, 1.2, 6).astype(np.float32)
  TERMS = [np.full(6, c, np.float32) for c in (1.0, 0.5, -2.0)]

  def assertSameSeries(self, got, want):
    (out, terms), (want_out, want_terms) = got, want
    np.testing.assert_array_equal(out, want_out)
    self.assertLen(terms, len(want_terms))
    for term, want_term in zip(terms, want_terms):
      np.testing.assert_array_equal(term, want_term)

  def test_series_in_grad_output_goes_through_the_mask(self):
    f = lambda g: jt.threshold_backward(jnp.sin(g), self.X, 0.5)
    where = lambda g: jnp.where(self.X > 0.5, jnp.sin(g), 0.0)
    got = jet.jet(f, (self.G,), (self.TERMS,))
    self.assertSameSeries(got, jet.jet(where, (self.G,), (self.TERMS,)))
    self.assertEqual(got[0].shape, self.X.shape)
    # One bind for the primal and one per term.
    jaxpr = jax.make_jaxpr(lambda g, *t: jet.jet(f, (g,), (list(t),)))(self.G, *self.TERMS)
    self.assertEqual(_count(jaxpr, "threshold_backward"), 1 + len(self.TERMS))

  def test_series_in_x_and_threshold_contribute_nothing(self):
    x = self.X[0]
    f = lambda x, t: jt.threshold_backward(self.G, x, t)
    where = lambda x, t: jnp.where(x > t, self.G, 0.0)
    t, t_terms = np.float32(0.5), [np.float32(1.0), np.float32(0.0), np.float32(3.0)]
    got = jet.jet(f, (x, t), (self.TERMS, t_terms))
    self.assertSameSeries(got, jet.jet(where, (x, t), (self.TERMS, t_terms)))
    for term in got[1]:
      np.testing.assert_array_equal(term, np.zeros(6, np.float32))

  def test_relu_gradient_series_matches_jnp_where(self):
    # The derivative of jt.threshold (through the primitive) along a Taylor series in x. (jet of
    # jt.threshold itself stops at its custom_jvp, as it does for jax.nn.relu.)
    grad = jax.grad(lambda x: jt.threshold(x, 0.5, -1.0).sum())
    grad_where = jax.grad(lambda x: jnp.where(x > 0.5, x, -1.0).sum())
    x = self.X[0]
    self.assertSameSeries(
      jet.jet(grad, (x,), (self.TERMS,)), jet.jet(grad_where, (x,), (self.TERMS,))
    )


@implementations.for_each_implementation
class CachingTest(parameterized.TestCase):
  def test_no_retrace_or_recompile_for_a_new_threshold(self):
    traces = []

    @jax.jit
    def f(g, x, t):
      traces.append(1)
      return jt.threshold_backward(g, x, t)

    g, x = np.ones(4, np.float32), np.array([-1.0, 0.0, 1.0, 2.0], np.float32)
    for t, expected in [(0.5, [0, 0, 1, 1]), (-2.0, [1, 1, 1, 1]), (1.5, [0, 0, 0, 1])]:
      np.testing.assert_array_equal(f(g, x, t), expected)
    self.assertLen(traces, 1)
    self.assertEqual(f._cache_size(), 1)

  def test_vmap_over_thresholds_inside_jit_compiles_once(self):
    f = jax.jit(jax.vmap(jt.threshold_backward, in_axes=(None, None, 0)))
    x = np.array([-1.0, 0.0, 1.0], np.float32)
    f(np.ones(3, np.float32), x, np.zeros(2, np.float32))
    out = f(np.ones(3, np.float32), x, np.array([-5.0, 0.5], np.float32))
    np.testing.assert_array_equal(out, [[1, 1, 1], [0, 0, 1]])
    self.assertEqual(f._cache_size(), 1)


class ImplementationSelectionTest(parameterized.TestCase):
  def test_jit_retraces_for_another_implementation_block(self):
    traces = []

    @jax.jit
    def f(x):
      traces.append(1)
      return jt.threshold_backward(x, x, 0.5)

    x = np.array([0.0, 1.0], np.float32)
    with jt.implementation("reference"):
      f(x)
      f(x)
      reference_jaxpr = str(jax.make_jaxpr(f)(x))
    self.assertLen(traces, 1)
    with jt.implementation("auto"):
      np.testing.assert_array_equal(f(x), [0.0, 1.0])
      auto_jaxpr = str(jax.make_jaxpr(f)(x))
    self.assertLen(traces, 2)  # not the cached "reference" trace
    self.assertIn("implementation=reference", reference_jaxpr)
    self.assertIn("implementation=auto", auto_jaxpr)

  def test_explicit_argument_beats_the_block(self):
    x = np.array([0.0, 1.0], np.float32)
    with jt.implementation("auto"):
      jaxpr = jax.make_jaxpr(
        lambda x: jt.threshold_backward(x, x, 0.5, implementation="reference")
      )(x)
    self.assertIn("implementation=reference", str(jaxpr))

  def test_reference_lowering_is_plain_hlo(self):
    x = np.array([0.0, 1.0], np.float32)
    with jt.implementation("reference"):
      hlo = jax.jit(lambda x: jt.threshold_backward(x, x, 0.5)).lower(x).as_text()
    self.assertNotIn("custom_call", hlo)
    self.assertIn("select", hlo)

  @parameterized.parameters(*[(impl,) for impl in implementations.IMPLEMENTATIONS])
  def test_every_available_implementation_agrees_with_the_oracle(self, impl):
    x = _normal(4, 5)
    g = _normal(4, 5)
    out = jt.threshold_backward(g, x, 0.2, implementation=impl)
    np.testing.assert_array_equal(out, oracle.threshold_backward(g, x, 0.2))


if __name__ == "__main__":
  absltest.main()
