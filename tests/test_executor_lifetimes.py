"""The executor's Python face cannot be used after free (docs/behaviour.md §2, executor reuse).

Each scenario of tests/executor_lifetime_checks.py runs in a child process, so that a crash or a
write into freed memory is a failure of that scenario: the issue's two reproducers (set_repeatable
after a one-shot run; destroy() from another thread during a run), destroy() returning only after
the run, every order of up to four of set_repeatable / run / rebind / destroy against a model of
CANN's rules, and two threads running while others rebind and destroy, round after round.
"""

import os

from absl.testing import absltest
from absl.testing import parameterized

from child_process import run_child

try:
  from jax_threshold import aclnn
except ImportError:  # a source tree without the compiled extension
  aclnn = None

_TESTS_DIR = os.path.dirname(os.path.abspath(__file__))


@absltest.skipIf(aclnn is None, "the native extension is not built")
class ExecutorLifetimesTest(parameterized.TestCase):
  @parameterized.parameters(
    "reproducer_repeatable_after_run",
    "reproducer_destroy_during_run",
    "destroy_returns_after_the_run",
    "misuse_orders",
    "threads_run_rebind_and_destroy",
  )
  def test_scenario(self, name):
    script = os.path.join(_TESTS_DIR, "executor_lifetime_checks.py")
    result = run_child([script, name], cpu=True, timeout=600)
    self.assertEqual(
      result.returncode,
      0,
      f"{name} exited with {result.returncode} (negative: killed by that signal)\n"
      f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-6000:]}",
    )


if __name__ == "__main__":
  absltest.main()
