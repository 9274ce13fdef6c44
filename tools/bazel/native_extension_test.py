"""The Bazel-built nanobind module, loaded on its own (not through the jax_threshold package).

Usage: native_extension_test.py PATH_TO_NATIVE_MODULE [absltest flags]

Checks that the module Bazel links (nanobind + executor + kernels + FFI handler) loads in the
Python it was built for and computes threshold_backward: through its executor bindings, and,
when jax is importable, through its XLA FFI handler called with jax.ffi.ffi_call.
"""

import importlib.util
import sys

from absl.testing import absltest
from absl.testing import parameterized
import numpy as np

_MODULE_PATH = sys.argv.pop(1) if len(sys.argv) > 1 else None

# aclDataType values (cpp/include/jax_threshold/aclnn_threshold_backward.h).
_ACL_DTYPES = {
  np.dtype(np.float32): 0,
  np.dtype(np.float16): 1,
  np.dtype(np.int8): 2,
  np.dtype(np.int32): 3,
  np.dtype(np.uint8): 4,
}
_SOC_HOST = 3  # SocVersion::kHost

try:
  import jax  # pylint: disable=g-import-not-at-top
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
except ImportError:
  jax = None


def _load_native():
  spec = importlib.util.spec_from_file_location("_native", _MODULE_PATH)
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


_native = _load_native() if _MODULE_PATH else None
_registered = False


def _register_ffi_targets():
  global _registered
  if not _registered:
    # The handlers' state type before the handlers, which XLA refuses without it (as
    # jax_threshold/ffi.py registers them).
    types = [t for t in _native.ffi_types() if t[1] == "cpu"]
    if types:
      from jaxlib import xla_client  # noqa: PLC0415

      xla_client.register_custom_type_handler("cpu", xla_client._xla.register_custom_type)
    for name, platform, registration in types:
      jax.ffi.register_ffi_type(name, registration, platform=platform)
    for name, platform, capsule in _native.ffi_handlers():
      if platform == "cpu":
        jax.ffi.register_ffi_target(name, capsule, platform="cpu")
    _registered = True


def _inputs(dtype, shape=(3, 37)):
  rng = np.random.default_rng(0)
  grad = rng.uniform(-5, 5, size=shape).astype(dtype)
  x = rng.uniform(-5, 5, size=shape).astype(dtype)
  return grad, x


def _expected(grad, x, threshold):
  # A select, never a multiply.
  return np.where(x > threshold, grad, np.zeros_like(grad))


def _tensor(array):
  strides = tuple(s // array.itemsize for s in array.strides)
  return (array.ctypes.data, array.shape, strides, _ACL_DTYPES[array.dtype])


class NativeExtensionTest(parameterized.TestCase):
  def setUp(self):
    super().setUp()
    if _native is None:
      self.fail("usage: native_extension_test.py PATH_TO_NATIVE_MODULE")

  @parameterized.parameters(
    (np.float32, 0.5),
    (np.float32, 0.0),  # ReluGrad
    (np.float16, -1.25),
    (np.int32, 2),
    (np.int8, -3),
  )
  def test_executor_two_phases(self, dtype, threshold):
    grad, x = _inputs(dtype)
    out = np.full_like(grad, 7)
    thr = np.asarray(threshold, dtype)
    status, workspace_size, executor = _native.threshold_backward_get_workspace_size(
      _tensor(grad), _tensor(x), (thr.tobytes(), _ACL_DTYPES[thr.dtype]), _tensor(out), _SOC_HOST
    )
    self.assertEqual(status, 0, _native.recent_error_message())
    workspace = np.zeros(max(workspace_size, 1), np.uint8)
    status = _native.threshold_backward(workspace.ctypes.data, workspace_size, executor)
    self.assertEqual(status, 0, _native.recent_error_message())
    np.testing.assert_array_equal(out, _expected(grad, x, thr))

  def test_phase_one_rejects_a_dtype_mismatch(self):
    grad, _ = _inputs(np.float32)
    _, x = _inputs(np.int32)
    out = np.zeros_like(grad)
    thr = np.asarray(0.5, np.float32)
    status, _, executor = _native.threshold_backward_get_workspace_size(
      _tensor(grad), _tensor(x), (thr.tobytes(), 0), _tensor(out), _SOC_HOST
    )
    self.assertNotEqual(status, 0)
    self.assertIsNone(executor)
    self.assertNotEmpty(_native.recent_error_message())

  @parameterized.parameters(np.float32, np.float16, np.int32)
  def test_ffi_handler_through_jax(self, dtype):
    if jax is None:
      self.skipTest("jax is not importable by this Python")
    self.assertTrue(_native.HAS_FFI_HANDLER)
    _register_ffi_targets()
    grad, x = _inputs(dtype, shape=(64, 300))  # big enough for several kernel blocks
    # The lowering's threshold operand: float32 for float16 x, x's own dtype for the others here.
    threshold = np.asarray(1, np.float32 if dtype == np.float16 else dtype)
    call = jax.ffi.ffi_call(_native.FFI_TARGET, jax.ShapeDtypeStruct(grad.shape, grad.dtype))
    out = jax.jit(lambda *a: call(*a, relu_grad=False))(
      jnp.asarray(grad), jnp.asarray(x), jnp.asarray(threshold)
    )
    np.testing.assert_array_equal(np.asarray(out), _expected(grad, x, threshold))


if __name__ == "__main__":
  absltest.main()
