"""The repository documents itself: public docstrings, their examples, links that resolve.

- Every public function of `jax_threshold` (and of `jax_threshold.aclnn` where the extension is
  built) has a docstring that says its arguments (when it takes any) and result, and gives an
  example.
- The runnable examples in those docstrings run (doctest) and print what they say.
- The README's API block names only public names, and names them all.
- The README's two quick-start commands are the ones CI runs, and every relative link in the
  Markdown files points at a file that exists.
- The dtype and SoC lists of README.md, docs/behaviour.md and the public docstrings are the
  table's: the Python contract (`jax_threshold._dtypes`) and the native rows (`_native`).
"""

import doctest
import inspect
import os
import re
import subprocess

from absl.testing import absltest
from absl.testing import parameterized

import dtype_lists
import jax_threshold as jt
from jax_threshold import _dtypes

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Public names whose docstrings are checked; the primitive and re-exported modules are data.
_DOCUMENTED = [
  name for name in jt.__all__ if callable(getattr(jt, name)) and name != "threshold_backward_p"
]

try:
  from jax_threshold import _native  # pylint: disable=g-import-not-at-top
  from jax_threshold import aclnn

  _ACLNN = [
    "threshold_backward_get_workspace_size",
    "threshold_backward",
    "recent_error_message",
    "threshold_grad_v2_d_tiling",
    "relu_grad_tiling",
  ]
except ImportError:  # no native extension: the executor's face is absent
  _native = aclnn = None
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


def _read(path):
  with open(os.path.join(ROOT, path), encoding="utf-8") as f:
    return f.read()


def _after(text, start, end="\n\n"):
  """The text from the first `start` to the next `end` (a paragraph by default)."""
  begin = text.index(start)
  return text[begin : text.index(end, begin + len(start))]


def _prose(text):
  """`text` with each run of white space one space, as Markdown reads it."""
  return " ".join(text.split())


def _dtype_names(text):
  """The dtype names a text lists, shorthand spelled out ("uint16/32/64", "int8/uint8")."""
  names = []
  for token in re.findall(
    r"\b(?:bool|complex|(?:u?int|b?float|complex)\d+)(?:/[a-z]*\d+)*\b", text
  ):
    first, *rest = token.split("/")
    prefix = re.match(r"[a-z]+", first).group()
    names += [first] + [prefix + part if part.isdigit() else part for part in rest]
  return names


def _table(text, heading):
  """The cells of the Markdown table that follows `heading`, one list per row."""
  lines = text[text.index(heading) :].split("\n")
  start = next(i for i, line in enumerate(lines) if line.startswith("|"))
  rows = []
  for line in lines[start + 2 :]:  # past the header and its rule
    if not line.startswith("|"):
      return rows
    rows.append([cell.strip() for cell in line.strip("|").split("|")])
  return rows


_SUPPORTED = [d.name for d in _dtypes.SUPPORTED_DTYPES]


class DtypeListsTest(absltest.TestCase):
  """Where the docs list the supported dtypes, they list exactly the contract's."""

  def _assert_lists_the_supported_dtypes(self, where, text):
    self.assertCountEqual(_dtype_names(text), _SUPPORTED, f"{where}: {text!r}")

  def test_readme(self):
    readme = _read("README.md")
    self._assert_lists_the_supported_dtypes("README", _prose(_after(readme, "**Dtypes**:", ". ")))

  def test_behaviour_types(self):
    types = _prose(_after(_read("docs/behaviour.md"), "### Types", "\n#"))
    self._assert_lists_the_supported_dtypes("behaviour.md §1", _after(types, "Supported:", "."))
    # The dtypes it names as refused are refused (a family name: every dtype of it).
    for name in _dtype_names(_after(types, "Anything else (", ")")):
      with self.subTest(refused=name):
        self.assertFalse(
          [s for s in _SUPPORTED if re.fullmatch(rf"{name}(\d+|_\w+)?", s)], f"{name} is supported"
        )

  def test_behaviour_comparison_precision(self):
    rows = _table(_read("docs/behaviour.md"), "### Comparison precision")
    listed = [frozenset(_dtype_names(dtypes)) for dtypes, _ in rows]
    narrow = frozenset(d.name for d in dtype_lists.NARROW_FLOATS)
    wide = frozenset(d.name for d in dtype_lists.FLOATS) - narrow
    self.assertCountEqual(listed, [narrow, wide, frozenset(d.name for d in dtype_lists.INTEGERS)])

  def test_threshold_backward_docstring(self):
    doc = inspect.getdoc(jt.threshold_backward)
    self._assert_lists_the_supported_dtypes(
      "jt.threshold_backward", _after(doc, "Supported dtypes:", ".")
    )

  def test_behaviour_ub_divisors(self):
    tiling = _prose(_after(_read("docs/behaviour.md"), "## 3. ThresholdGradV2D tiling", "\n## "))
    text = _after(tiling, "Per-dtype UB divisor", ".")
    documented = {}
    for dtypes, divisor in re.findall(r"([a-z0-9/]+) (\d+)\b", text):
      documented.update(dict.fromkeys(_dtype_names(dtypes), int(divisor)))
    self.assertEqual(documented, dtype_lists.UB_DIVISORS)


@absltest.skipIf(_native is None, "the native table is not built")
class SocListsTest(absltest.TestCase):
  """Where the docs list the SoCs, they list exactly the SoC rows, with each row's dtypes and
  platform defaults."""

  def test_behaviour_soc_table(self):
    rows = _table(_read("docs/behaviour.md"), "| SoC | unified buffer, cores |")
    socs = [cells[0].split()[0] for cells in rows]
    self.assertCountEqual(socs, _native.SOCS)
    for soc, (name, platform, dtypes, zero_only) in zip(socs, rows):
      with self.subTest(soc=soc):
        self.assertEqual("(default)" in name, soc == _native.DEFAULT_SOC)
        ub = _native.SOC_UB_SIZE[soc]
        if ub:
          self.assertEqual(platform, f"{ub // 1024} KiB, {_native.SOC_CORE_NUM[soc]}")
        else:  # no unified buffer of its own: the host's tiles
          self.assertIn(f"tiles for {aclnn.HOST_UB_SIZE // 1024} KiB", platform)
          self.assertIn("per hardware thread", platform)
        listed = _dtype_names(dtypes.split(" — ")[0])
        runs = _native.SOC_ZERO_THRESHOLD_DTYPES[soc]
        self.assertEqual("refused by phase one" in dtypes, not runs)
        if runs:
          self.assertEqual(listed, list(_native.SOC_DTYPES[soc]))
          zero = [d for d in runs if d not in _native.SOC_DTYPES[soc]]
          self.assertEqual(_dtype_names(zero_only.split("(")[0]), zero)
        else:  # its AscendC API's upper bound, which phase one never reaches
          self.assertContainsSubset(listed, _native.KERNEL_DTYPES)

  def test_readme_soc_list(self):
    bullet = _after(_read("README.md"), "- SoCs:", "\n- ")
    self.assertCountEqual(re.findall(r'"(\w+)"', bullet), _native.SOCS)
    self.assertEqual(re.findall(r'"(\w+)"`? \(default\)', bullet), [_native.DEFAULT_SOC])
    refused = [s for s in _native.SOCS if not _native.SOC_ZERO_THRESHOLD_DTYPES[s]]
    self.assertCountEqual(re.findall(r'"(\w+)"`? is refused', bullet), refused)

  def test_readme_example_names_the_socs_that_run(self):
    line = next(line for line in _read("README.md").splitlines() if 'soc="' in line and "#" in line)
    example = line.split("#", 1)[1]
    runs = [s for s in _native.SOCS if _native.SOC_ZERO_THRESHOLD_DTYPES[s]]
    self.assertCountEqual(re.findall(r'"(\w+)"', example), runs)


if __name__ == "__main__":
  absltest.main()
