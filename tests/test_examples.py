"""Runs every script in examples/ the way a user would, so CI keeps them working.

Each example runs in a fresh interpreter (`sys.executable`, working directory
the repository root) that imports the same jax_threshold as this test
process, and must exit 0. The examples check their own results (gradients
agree, accuracy >= 0.95, bit-identical custom_vjp) and exit non-zero if not.
"""

import os
import re
import subprocess
import sys
import tempfile
import unittest

from absl.testing import absltest
from absl.testing import parameterized

import jax_threshold as jt

try:
  import flax  # noqa: F401  # pylint: disable=unused-import
  import optax  # noqa: F401  # pylint: disable=unused-import

  HAVE_FLAX = True
except ImportError:
  HAVE_FLAX = False

try:
  import matplotlib  # noqa: F401  # pylint: disable=unused-import
  import sklearn  # noqa: F401  # pylint: disable=unused-import
  import tqdm  # noqa: F401  # pylint: disable=unused-import

  HAVE_EXAMPLE_EXTRAS = True
except ImportError:
  HAVE_EXAMPLE_EXTRAS = False

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
# Every implementation this build has; "auto" is covered by the flax_mlp and
# quickstart runs, which use the default.
IMPLEMENTATIONS = tuple(jt.available_implementations())
requires_flax = unittest.skipIf(not HAVE_FLAX, "needs the [flax] extra")


def run_example(name, *args, timeout=300):
  path = os.path.join(EXAMPLES, name)
  if not os.path.exists(path):
    raise AssertionError(f"missing example {path}")
  env = dict(os.environ)
  # The child imports the very package this process imported (installed or
  # source tree), whatever the current directory puts on sys.path.
  package_parent = os.path.dirname(os.path.dirname(os.path.abspath(jt.__file__)))
  env["PYTHONPATH"] = os.pathsep.join([package_parent] + [p for p in [env.get("PYTHONPATH")] if p])
  env.setdefault("MPLBACKEND", "Agg")
  result = subprocess.run(
    [sys.executable, path, *args],
    cwd=ROOT,
    env=env,
    capture_output=True,
    text=True,
    timeout=timeout,
  )
  if result.returncode != 0:
    raise AssertionError(
      f"{name} {' '.join(args)} exited {result.returncode}\n"
      f"--- stdout ---\n{result.stdout}\n--- stderr ---\n{result.stderr}"
    )
  return result.stdout


class ExamplesTest(parameterized.TestCase):
  def test_quickstart(self):
    self.assertNotEmpty(run_example("quickstart.py"))

  @parameterized.named_parameters(*((n, n) for n in IMPLEMENTATIONS))
  def test_per_example_grads(self, implementation):
    out = run_example(
      "per_example_grads.py", "--batch", "16", "--repeats", "1", "--implementation", implementation
    )
    self.assertIn("gradients match", out)
    self.assertIn("grad jaxpr uses threshold_backward: True", out)
    self.assertRegex(out, r"vmap\(grad\): +[0-9.]+ ms")
    self.assertRegex(out, r"Python loop: +[0-9.]+ ms")

  @requires_flax
  @parameterized.named_parameters(*((n, n) for n in IMPLEMENTATIONS))
  def test_custom_vjp_flax(self, implementation):
    out = run_example("custom_vjp_flax.py", "--steps", "5", "--implementation", implementation)
    self.assertIn("gradients: bit-identical", out)
    self.assertIn("parameters bit-identical", out)

  @requires_flax
  @unittest.skipIf(
    not HAVE_EXAMPLE_EXTRAS, "needs scikit-learn, tqdm and matplotlib ([examples] extra)"
  )
  def test_flax_mlp_default_run(self):
    # The default run, as the README shows it; the implementation is the
    # default "auto" (the FFI kernels when built, else the reference).
    with tempfile.TemporaryDirectory() as tmp:
      plot = os.path.join(tmp, "curves.png")
      out = run_example("flax_mlp.py", "--plot", plot)
      match = re.search(r"^test accuracy: ([0-9.]+)$", out, re.MULTILINE)
      self.assertIsNotNone(match, out)
      self.assertGreaterEqual(float(match.group(1)), 0.95)
      with open(plot, "rb") as f:
        self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")


if __name__ == "__main__":
  absltest.main()
