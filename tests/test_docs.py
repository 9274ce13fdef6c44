"""The repository documents itself: public docstrings, their examples, links that resolve.

- Every public function of `jax_threshold` (and of `jax_threshold.aclnn` where the extension is
  built) has a docstring that says its arguments (when it takes any) and result, and gives an
  example.
- The runnable examples in those docstrings run (doctest) and print what they say.
- The README's API block names only public names, and names them all.
- The README's two quick-start commands are the ones CI runs, and every relative link in the
  Markdown files points at a file that exists.
"""

import doctest
import inspect
import os
import re
import subprocess

from absl.testing import absltest
from absl.testing import parameterized

import jax_threshold as jt

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Public names whose docstrings are checked; the primitive and re-exported modules are data.
_DOCUMENTED = [
  name for name in jt.__all__ if callable(getattr(jt, name)) and name != "threshold_backward_p"
]

try:
  from jax_threshold import aclnn  # pylint: disable=g-import-not-at-top

  _ACLNN = [
    "threshold_backward_get_workspace_size",
    "threshold_backward",
    "recent_error_message",
    "threshold_grad_v2_d_tiling",
    "relu_grad_tiling",
  ]
except ImportError:  # no native extension: the executor's face is absent
  aclnn = None
  _ACLNN = []


def _sections(fn):
  """Which of the required parts the docstring of `fn` has."""
  doc = inspect.getdoc(fn) or ""
  return {
    "arguments": bool(re.search(r"^\s*(Args|Attributes):", doc, re.M))
    or not inspect.signature(fn).parameters,
    "result": bool(re.search(r"^\s*(Returns|Call):", doc, re.M)),
    "example": bool(re.search(r"^\s*Example", doc, re.M)),
  }


class DocstringTest(parameterized.TestCase):
  @parameterized.parameters(*_DOCUMENTED)
  def test_public_function_is_documented(self, name):
    missing = [part for part, ok in _sections(getattr(jt, name)).items() if not ok]
    self.assertEqual(missing, [], f"jax_threshold.{name}'s docstring lacks {missing}")

  @parameterized.parameters(*_ACLNN)
  def test_aclnn_function_is_documented(self, name):
    missing = [part for part, ok in _sections(getattr(aclnn, name)).items() if not ok]
    self.assertEqual(missing, [], f"jax_threshold.aclnn.{name}'s docstring lacks {missing}")

  @parameterized.parameters("threshold_backward", "threshold")
  def test_docstring_examples_run(self, name):
    # Only the self-contained examples are executed; the others illustrate a call in context.
    test = doctest.DocTestFinder().find(getattr(jt, name), name, globs={})[0]
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    self.assertEqual(runner.failures, 0, f"the example in jax_threshold.{name} fails")
    self.assertGreater(runner.tries, 0)


class RepositoryTest(absltest.TestCase):
  def _tracked_text_files(self):
    try:
      out = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
      ).stdout
    except (OSError, subprocess.CalledProcessError):
      self.skipTest("not a git checkout")
    for path in out.split():
      if path.endswith((".png", ".jpg")):
        continue
      full = os.path.join(ROOT, path)
      if os.path.isfile(full):
        with open(full, encoding="utf-8", errors="replace") as f:
          yield path, f.read()

  def test_readme_api_block_matches_the_package(self):
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
      readme = f.read()
    named = set(re.findall(r"\bjt\.([a-z_]+)\b", readme))
    unknown = sorted(n for n in named if not hasattr(jt, n))
    self.assertEqual(unknown, [], "the README names functions jax_threshold does not have")
    unnamed = sorted(n for n in jt.__all__ if n not in named)
    self.assertEqual(unnamed, [], "public names the README does not show")

  def test_docs_exist(self):
    for doc in (
      "docs/behaviour.md",
      "docs/architecture.md",
      "docs/npu.md",
      "CONTRIBUTING.md",
      "benchmarks/README.md",
    ):
      self.assertTrue(os.path.isfile(os.path.join(ROOT, doc)), doc)

  def test_readme_quick_start_is_what_ci_runs(self):
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
      readme = f.read()
    self.assertIn("pip install . && python examples/quickstart.py", readme)
    self.assertIn("pip install '.[test]' && python -m pytest", readme)
    self.assertTrue(os.path.isfile(os.path.join(ROOT, "examples", "quickstart.py")))
    with open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8") as f:
      ci = f.read()
    self.assertIn("'.[test]'", ci)
    self.assertIn("-m pytest", ci)

  def test_markdown_links_point_at_files_that_exist(self):
    broken = []
    for path, text in self._tracked_text_files():
      if not path.endswith(".md"):
        continue
      for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
          continue  # a URL or an anchor in the same file
        local = os.path.join(os.path.dirname(path), target.split("#")[0])
        if not os.path.exists(os.path.join(ROOT, local)):
          broken.append(f"{path}: {target}")
    self.assertEqual(broken, [])


if __name__ == "__main__":
  absltest.main()
