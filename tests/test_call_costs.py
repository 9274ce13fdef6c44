"""What a custom call pays per call: CANN's executor reuse through the Python face
(docs/behaviour.md §2), the custom call's plans kept per compiled call (a reused plan gives the
same bits for new buffers and threshold values, also from many threads at once), and the
custom call's relu_grad attribute, set for a threshold known to be ±0 (§5): ReluGrad, with the
same bits as the reference.
"""

import concurrent.futures
import re

from absl.testing import absltest
from absl.testing import parameterized
import jax
import jax.numpy as jnp
import numpy as np

import jax_threshold as jt
import dtype_lists
import oracle

HAS_FFI = "ffi" in jt.available_implementations()
try:
  from jax_threshold import aclnn
except ImportError:  # a source tree without the compiled extension
  aclnn = None

TARGET = "jax_threshold_threshold_backward_v2"
RELU_GRAD = [(TARGET, "true")]
THRESHOLD_GRAD_V2_D = [(TARGET, "false")]


def _values(rng, shape, dtype):
  dtype = np.dtype(dtype)
  if np.issubdtype(dtype, np.integer):
    info = np.iinfo(dtype)
    pool = np.array([info.min, -1, 0, 1, 2, info.max], np.int64)
    return rng.choice(pool, shape).astype(dtype)
  pool = np.array([-np.inf, -1.5, -0.0, 0.0, 1e-40, 0.25, 0.5, 2.0, np.inf, np.nan], np.float32)
  return rng.choice(pool, shape).astype(dtype)


@absltest.skipIf(aclnn is None, "the native extension is not built")
class ExecutorReuseTest(absltest.TestCase):
  def _plan(self, shape=(3, 4)):
    g = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) + 1
    x = np.linspace(-1, 1, int(np.prod(shape)), dtype=np.float32).reshape(shape)
    out = np.full(shape, -7, np.float32)
    status, size, executor = aclnn.threshold_backward_get_workspace_size(g, x, 0.25, out)
    self.assertEqual(status, aclnn.ACLNN_SUCCESS)
    return g, x, out, size, executor

  def test_a_repeatable_executor_runs_with_rebound_arrays_until_destroyed(self):
    g, x, out, size, executor = self._plan()
    self.assertEqual(executor.set_repeatable(), aclnn.ACLNN_SUCCESS)
    self.assertEqual(aclnn.threshold_backward(None, size, executor), aclnn.ACLNN_SUCCESS)
    np.testing.assert_array_equal(out, np.where(x > 0.25, g, 0))
    rng = np.random.default_rng(0)
    for _ in range(3):
      g2 = rng.standard_normal(g.shape).astype(np.float32)
      x2 = rng.standard_normal(x.shape).astype(np.float32)
      out2 = np.empty_like(out)
      self.assertEqual(executor.set_input_tensor_addr(0, g2), aclnn.ACLNN_SUCCESS)
      self.assertEqual(executor.set_input_tensor_addr(1, x2), aclnn.ACLNN_SUCCESS)
      self.assertEqual(executor.set_output_tensor_addr(0, out2), aclnn.ACLNN_SUCCESS)
      self.assertEqual(aclnn.threshold_backward(None, size, executor), aclnn.ACLNN_SUCCESS)
      np.testing.assert_array_equal(out2, np.where(x2 > np.float32(0.25), g2, 0))
    self.assertEqual(executor.destroy(), aclnn.ACLNN_SUCCESS)
    # Used after destruction: error codes, never a crash.
    self.assertEqual(aclnn.threshold_backward(None, size, executor), aclnn.ACLNN_ERR_PARAM_INVALID)
    self.assertEqual(executor.set_repeatable(), aclnn.ACLNN_ERR_PARAM_INVALID)
    self.assertEqual(executor.set_input_tensor_addr(0, g), aclnn.ACLNN_ERR_PARAM_INVALID)
    self.assertEqual(executor.destroy(), aclnn.ACLNN_ERR_PARAM_INVALID)
    with self.assertRaisesRegex(ValueError, "destroyed"):
      _ = executor.kernel

  def test_a_non_repeatable_executor_is_consumed_and_destroying_it_is_an_error_code(self):
    _, _, _, size, executor = self._plan()
    self.assertEqual(aclnn.threshold_backward(None, size, executor), aclnn.ACLNN_SUCCESS)
    self.assertEqual(aclnn.threshold_backward(None, size, executor), aclnn.ACLNN_ERR_PARAM_INVALID)
    self.assertEqual(executor.destroy(), aclnn.ACLNN_ERR_PARAM_INVALID)
    self.assertEqual(aclnn.threshold_backward(None, size, executor), aclnn.ACLNN_ERR_PARAM_INVALID)

  def test_rebinding_checks_index_size_dtype_and_alignment(self):
    g, x, out, size, executor = self._plan((2, 3))
    self.assertEqual(executor.set_repeatable(), aclnn.ACLNN_SUCCESS)
    invalid = aclnn.ACLNN_ERR_PARAM_INVALID
    self.assertEqual(executor.set_input_tensor_addr(2, g.copy()), invalid)  # scalar threshold
    self.assertEqual(executor.set_output_tensor_addr(1, out.copy()), invalid)
    self.assertEqual(executor.set_input_tensor_addr(0, np.zeros((3, 2), np.float32)), invalid)
    self.assertEqual(executor.set_input_tensor_addr(0, np.zeros((2, 3), np.int32)), invalid)
    raw = np.zeros(2 * 3 * 4 + 4, np.uint8)
    unaligned = raw[1 : 1 + 24].view(np.float32).reshape(2, 3)
    self.assertEqual(executor.set_input_tensor_addr(0, unaligned), invalid)
    with self.assertRaises(TypeError):
      executor.set_input_tensor_addr("0", g)
    # Out onto x while the plan wrote out directly: refused by the run, then fine again.
    self.assertEqual(executor.set_output_tensor_addr(0, x), aclnn.ACLNN_SUCCESS)
    self.assertEqual(aclnn.threshold_backward(None, size, executor), invalid)
    self.assertEqual(executor.set_output_tensor_addr(0, out), aclnn.ACLNN_SUCCESS)
    self.assertEqual(aclnn.threshold_backward(None, size, executor), aclnn.ACLNN_SUCCESS)
    np.testing.assert_array_equal(out, np.where(x > np.float32(0.25), g, 0))
    self.assertEqual(executor.destroy(), aclnn.ACLNN_SUCCESS)


@absltest.skipIf(not HAS_FFI, "the XLA FFI handler is not built")
class PlanPerCompiledCallTest(parameterized.TestCase):
  @parameterized.parameters(
    ((37,), (37,)),
    ((1, 300), (200, 300)),  # a broadcast operand, read through the kernel's copy-in
    ((), (5, 1, 3)),
    ((100_003,), (100_003,)),  # several kernel blocks
  )
  def test_a_reused_plan_gives_the_same_bits_for_new_buffers_and_thresholds(self, g_shape, x_shape):
    f = jax.jit(lambda g, x, t: jt.threshold_backward(g, x, t, implementation="ffi"))
    rng = np.random.default_rng(1)
    for t in (0.5, 0.0, -1.5, np.nan, 0.25):
      g = _values(rng, g_shape, np.float32)
      x = _values(rng, x_shape, np.float32)
      want = jt.threshold_backward(g, x, t, implementation="reference")
      np.testing.assert_array_equal(oracle.bits(f(g, x, t)), oracle.bits(want))

  def test_a_reused_plan_of_a_batched_threshold_reads_the_new_thresholds(self):
    f = jax.jit(
      jax.vmap(lambda g, x, t: jt.threshold_backward(g, x, t, implementation="ffi"), (None, 0, 0))
    )
    rng = np.random.default_rng(4)
    g = _values(rng, (40,), np.float32)
    for _ in range(4):
      x = _values(rng, (6, 40), np.float32)
      ts = rng.choice(np.array([-1.0, 0.0, 0.25, np.nan], np.float32), 6)
      want = np.stack([np.where(x[i] > ts[i], g, np.float32(0)) for i in range(6)])
      np.testing.assert_array_equal(oracle.bits(f(g, x, ts)), oracle.bits(want))

  def test_one_executable_from_many_threads_at_once(self):
    f = jax.jit(lambda g, x, t: jt.threshold_backward(g, x, t, implementation="ffi"))
    rng = np.random.default_rng(2)
    cases = [
      (_values(rng, (64, 33), np.float32), _values(rng, (64, 33), np.float32), t)
      for t in np.linspace(-1, 1, 16, dtype=np.float32)
    ]
    f(*cases[0]).block_until_ready()

    def run(case):
      g, x, t = case
      return oracle.bits(f(g, x, t)), oracle.bits(
        jt.threshold_backward(g, x, t, implementation="reference")
      )

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
      for got, want in pool.map(run, cases * 4):
        np.testing.assert_array_equal(got, want)


@absltest.skipIf(not HAS_FFI, "the XLA FFI handler is not built")
class ReluGradAttributeTest(parameterized.TestCase):
  def _targets(self, fn, *args):
    """(target, relu_grad attribute) of each custom call `fn` lowers to."""
    text = jax.jit(fn).lower(*args).as_text()
    return re.findall(r"custom_call @(\w+)\(.*relu_grad = (true|false)", text)

  @parameterized.parameters(0.0, -0.0, 0, np.float32(0), np.int8(0))
  def test_a_static_zero_sets_the_flag_and_lowers_to_relu_grad(self, t):
    g = x = jnp.ones((4, 5), jnp.float32)
    fn = lambda g, x: jt.threshold_backward(g, x, t, implementation="ffi")
    eqn = jax.make_jaxpr(fn)(g, x).eqns[-1]
    self.assertIs(eqn.params["relu_grad"], True)
    self.assertEqual(self._targets(fn, g, x), RELU_GRAD)

  @parameterized.parameters(0.5, -1e-45, 1e-9, float("nan"))
  def test_any_other_static_threshold_keeps_threshold_grad_v2_d(self, t):
    g = x = jnp.ones((4, 5), jnp.float32)
    fn = lambda g, x: jt.threshold_backward(g, x, t, implementation="ffi")
    self.assertIs(jax.make_jaxpr(fn)(g, x).eqns[-1].params["relu_grad"], False)
    self.assertEqual(self._targets(fn, g, x), THRESHOLD_GRAD_V2_D)

  def test_a_traced_zero_keeps_the_operand_target(self):
    g = x = jnp.ones((4, 5), jnp.float32)
    fn = lambda g, x, t: jt.threshold_backward(g, x, t, implementation="ffi")
    self.assertIs(jax.make_jaxpr(fn)(g, x, 0.0).eqns[-1].params["relu_grad"], False)
    self.assertEqual(self._targets(fn, g, x, 0.0), THRESHOLD_GRAD_V2_D)

  def test_an_integer_threshold_below_one_is_relu_grad_for_integer_x(self):
    # x > 0.5 is x > 0 for integers: the operand is 0, and so is the kernel choice.
    g = x = jnp.ones((4,), jnp.int32)
    fn = lambda g, x: jt.threshold_backward(g, x, 0.5, implementation="ffi")
    self.assertEqual(self._targets(fn, g, x), RELU_GRAD)

  @parameterized.parameters(((2, 1) * 5, (1, 2) * 5), ((2,) * 9, (2,) * 9))
  def test_above_relu_grads_rank_limit_the_zero_threshold_is_read(self, g_shape, x_shape):
    # ReluGrad's phase one takes at most 8 dims: the call reads its threshold of 0 instead.
    rng = np.random.default_rng(6)
    g, x = _values(rng, g_shape, np.float32), _values(rng, x_shape, np.float32)
    fn = lambda g, x: jt.threshold_backward(g, x, 0.0, implementation="ffi")
    self.assertIs(jax.make_jaxpr(fn)(g, x).eqns[-1].params["relu_grad"], True)
    self.assertEqual(self._targets(fn, g, x), THRESHOLD_GRAD_V2_D)
    want = jt.threshold_backward(g, x, 0.0, implementation="reference")
    np.testing.assert_array_equal(oracle.bits(jax.jit(fn)(g, x)), oracle.bits(want))

  @parameterized.parameters((7, 9), (300, 401))
  def test_relu_grad_never_reads_the_threshold(self, *shape):
    # A NaN threshold would let nothing pass: relu_grad=true gives the bits of 0, in one kernel
    # block and in several.
    rng = np.random.default_rng(5)
    g, x = _values(rng, shape, np.float32), _values(rng, shape, np.float32)
    call = jax.ffi.ffi_call(TARGET, jax.ShapeDtypeStruct(x.shape, x.dtype))
    got = jax.jit(lambda g, x: call(g, x, np.float32(np.nan), relu_grad=True))(g, x)
    want = jt.threshold_backward(g, x, 0.0, implementation="reference")
    np.testing.assert_array_equal(oracle.bits(got), oracle.bits(want))

  def test_relu_grad_must_be_a_bool(self):
    g = x = jnp.ones((4,), jnp.float32)
    call = jax.ffi.ffi_call(TARGET, jax.ShapeDtypeStruct(x.shape, x.dtype))
    with self.assertRaisesRegex(Exception, "attribute relu_grad must be a bool"):
      jax.block_until_ready(jax.jit(lambda g, x: call(g, x, np.float32(0), relu_grad=1))(g, x))

  @parameterized.product(
    dtype=dtype_lists.CANONICAL,
    shapes=[((7, 9), (7, 9)), ((1, 9), (7, 9)), ((), (3, 1, 4)), ((100_003,), (100_003,))],
    t=[0.0, -0.0],
  )
  def test_relu_grad_gives_the_reference_bits(self, dtype, shapes, t):
    rng = np.random.default_rng(3)
    g = _values(rng, shapes[0], dtype)
    x = _values(rng, shapes[1], dtype)
    got = jax.jit(lambda g, x: jt.threshold_backward(g, x, t, implementation="ffi"))(g, x)
    want = jt.threshold_backward(g, x, t, implementation="reference")
    np.testing.assert_array_equal(oracle.bits(got), oracle.bits(want))

  def test_the_flag_follows_vmap_grad_and_transpose(self):
    x = jnp.linspace(-2, 2, 12, dtype=jnp.float32).reshape(3, 4)
    g = jnp.arange(12, dtype=jnp.float32).reshape(3, 4)
    batched = lambda g, x: jax.vmap(
      lambda g, x: jt.threshold_backward(g, x, 0.0, implementation="ffi")
    )(g, x)
    self.assertEqual(self._targets(batched, g, x), RELU_GRAD)
    np.testing.assert_array_equal(batched(g, x), np.where(x > 0, g, 0))
    linear = lambda g: jt.threshold_backward(g, x, 0.0, implementation="ffi")
    (ct,) = jax.linear_transpose(linear, g)(g)
    np.testing.assert_array_equal(ct, np.where(x > 0, g, 0))
    relu = jax.grad(lambda x: jt.threshold(x, 0.0, 0.0, implementation="ffi").sum())
    np.testing.assert_array_equal(relu(x), np.where(x > 0, 1.0, 0.0))


if __name__ == "__main__":
  absltest.main()
