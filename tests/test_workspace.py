"""The executor's workspace through jax_threshold.aclnn (docs/behaviour.md §2, "The workspace").

Phase one's size includes the slack phase two needs to align its buffers inside whatever
allocation the caller hands over, so a workspace at any byte offset works; one that overlaps a
tensor of the call (grad_output, x or out) is ACLNN_ERR_PARAM_INVALID and nothing is written.
Cases that could abort the process run in a child process.
"""

import os
import subprocess
import sys
import textwrap

from absl.testing import absltest
from absl.testing import parameterized
import numpy as np

import dtype_lists
from jax_threshold import aclnn

needs_native = absltest.skipUnless(
  hasattr(aclnn, "threshold_backward_get_workspace_size"), "the native extension is not built"
)

N = 64  # float32 elements of each tensor
# Every SoC the kernels run float32 on (the native table's lists).
FLOAT32_SOCS = [soc for soc, names in aclnn._native.SOC_DTYPES.items() if "float32" in names]


def _transposed_out_call(arena, at):
  """grad_output, x, out (a transposed view, so the kernel's result goes through the
  workspace) as float32 views of `arena` from byte `at`; the planned executor and its size."""
  floats = arena[at : at + 3 * N * 4].view(np.float32)
  g, x, out_storage = floats[:N], floats[N : 2 * N], floats[2 * N :]
  g[:] = np.arange(1, N + 1)
  x[:] = np.arange(N) - 20.0
  out_storage[:] = -1
  out = out_storage.reshape(8, 8).T
  status, ws, executor = aclnn.threshold_backward_get_workspace_size(
    g.reshape(8, 8), x.reshape(8, 8), 0.5, out, soc="host"
  )
  assert status == aclnn.ACLNN_SUCCESS, aclnn.recent_error_message()
  assert executor.copies == (False, False, True)
  expected = np.where(x > 0.5, g, np.float32(0)).reshape(8, 8)
  return g, x, out, ws, executor, expected


@needs_native
class WorkspaceAlignmentTest(parameterized.TestCase):
  def test_reported_size_leaves_room_to_align(self):
    arena = np.zeros(4096, np.uint8)
    *_, ws, executor, _ = _transposed_out_call(arena, 0)
    self.assertGreaterEqual(ws, N * 4 + aclnn._native.WORKSPACE_ALIGNMENT - 1)
    self.assertEqual(executor.workspace_size, ws)

  def test_every_byte_offset_works(self):
    # A workspace at any byte offset, also one off the element alignment, runs and gives the
    # result. In a child process, so that an abort fails this test instead of the test run.
    code = textwrap.dedent(f"""
        import sys
        sys.path[:0] = {sys.path!r}
        import numpy as np
        import test_workspace as t
        from jax_threshold import aclnn
        for shift in range(aclnn._native.WORKSPACE_ALIGNMENT + 3):
          arena = np.zeros(4096, np.uint8)
          g, x, out, ws, executor, expected = t._transposed_out_call(arena, 0)
          room = np.zeros(ws + shift, np.uint8)
          status = aclnn.threshold_backward(room[shift:], ws, executor)
          assert status == aclnn.ACLNN_SUCCESS, (shift, aclnn.recent_error_message())
          assert (out == expected).all(), shift
        print("ok")
    """)
    result = subprocess.run(
      [sys.executable, "-c", code],
      capture_output=True,
      text=True,
      timeout=300,
      check=False,
      cwd=os.path.dirname(__file__),
    )
    self.assertEqual(result.returncode, 0, result.stderr[-3000:])
    self.assertEqual(result.stdout.split(), ["ok"])

  def test_numpy_default_allocation_works(self):
    arena = np.zeros(4096, np.uint8)
    _, _, out, ws, executor, expected = _transposed_out_call(arena, 4)  # tensors off 8 bytes
    self.assertEqual(
      aclnn.threshold_backward(np.empty(ws, np.uint8), ws, executor),
      aclnn.ACLNN_SUCCESS,
      aclnn.recent_error_message(),
    )
    np.testing.assert_array_equal(out, expected)


@needs_native
class WorkspaceOverlapTest(parameterized.TestCase):
  @parameterized.product(tensor=["grad_output", "x", "out"], where=["before", "at", "inside"])
  def test_workspace_overlapping_a_tensor_is_refused(self, tensor, where):
    # Accepted, the kernel's result would overwrite the tensor in the workspace: a wrong out.
    arena = np.zeros(8192, np.uint8)
    base = 2048
    g, x, out, ws, executor, expected = _transposed_out_call(arena, base)
    start = base + {"grad_output": 0, "x": N * 4, "out": 2 * N * 4}[tensor]
    start += {"before": -100, "at": 0, "inside": N * 4 - 4}[where]
    before = arena.copy()
    status = aclnn.threshold_backward(arena[start : start + ws], ws, executor)
    self.assertEqual(status, aclnn.ACLNN_ERR_PARAM_INVALID)
    self.assertIn("the workspace overlaps", aclnn.recent_error_message())
    np.testing.assert_array_equal(arena, before)  # nothing ran
    # The executor has not run: a separate workspace still works.
    self.assertEqual(
      aclnn.threshold_backward(np.empty(ws, np.uint8), ws, executor), aclnn.ACLNN_SUCCESS
    )
    np.testing.assert_array_equal(out, expected)

  def test_workspace_right_after_the_tensors_is_accepted(self):
    arena = np.zeros(8192, np.uint8)
    _, _, out, ws, executor, expected = _transposed_out_call(arena, 0)
    end = 3 * N * 4
    self.assertEqual(
      aclnn.threshold_backward(arena[end : end + ws], ws, executor),
      aclnn.ACLNN_SUCCESS,
      aclnn.recent_error_message(),
    )
    np.testing.assert_array_equal(out, expected)


@needs_native
class BroadcastWorkspaceTest(parameterized.TestCase):
  """Broadcast inputs are read through the kernel's copy-in: the workspace does not grow with out
  (docs/behaviour.md §2 and §4)."""

  @parameterized.named_parameters(
    *dtype_lists.by_row(
      soc=FLOAT32_SOCS, pattern=["row", "column", "scalar", "both"], rows=[1, 100, 5000]
    )
  )
  def test_contiguous_broadcast_inputs_need_no_workspace(self, pattern, rows, soc):
    rng = np.random.default_rng(rows)
    g_shape, x_shape = {
      "row": ((1, 64), (rows, 64)),
      "column": ((rows, 64), (rows, 1)),
      "scalar": ((), (rows, 3, 64)),
      "both": ((1, 1, 64), (rows, 7, 1)),
    }[pattern]
    g = rng.standard_normal(g_shape).astype(np.float32)
    x = rng.standard_normal(x_shape).astype(np.float32)
    out = np.full(np.broadcast_shapes(g.shape, x.shape), np.float32(7))
    status, ws, executor = aclnn.threshold_backward_get_workspace_size(g, x, 0.25, out, soc=soc)
    self.assertEqual(status, aclnn.ACLNN_SUCCESS, aclnn.recent_error_message())
    self.assertEqual((ws, executor.copies), (0, (False, False, False)))
    self.assertEqual(aclnn.threshold_backward(None, 0, executor), aclnn.ACLNN_SUCCESS)
    np.testing.assert_array_equal(out, np.where(x > np.float32(0.25), g, np.float32(0)))

  @parameterized.parameters(10, 1000)
  def test_a_strided_broadcast_input_is_copied_at_its_own_size(self, rows):
    g_storage = np.arange(1, 129, dtype=np.float32)
    g = g_storage[::2]  # (64,), strided
    x = np.linspace(-1, 1, rows * 64, dtype=np.float32).reshape(rows, 64)
    out = np.zeros((rows, 64), np.float32)
    status, ws, executor = aclnn.threshold_backward_get_workspace_size(g, x, 0.25, out, soc="host")
    self.assertEqual(status, aclnn.ACLNN_SUCCESS, aclnn.recent_error_message())
    self.assertEqual(executor.copies, (True, False, False))
    self.assertLess(ws, 2 * aclnn._native.WORKSPACE_ALIGNMENT)  # 256 bytes, aligned, + slack
    self.assertEqual(
      aclnn.threshold_backward(np.empty(ws, np.uint8), ws, executor), aclnn.ACLNN_SUCCESS
    )
    np.testing.assert_array_equal(out, np.where(x > np.float32(0.25), g, np.float32(0)))


if __name__ == "__main__":
  absltest.main()
