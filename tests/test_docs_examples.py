"""The Python examples of README.md and docs/*.md run and show what they say.

Sybil parses the Markdown: a ```python block of `>>>` lines is a doctest whose outputs are
compared; any other ```python block runs as code, checked by its asserts; an
`<!-- invisible-code-block: python -->` comment runs code the reader need not see (the names an
example assumes); `<!-- skip: next "reason" -->` (or `skip: start` ... `skip: end` around a
doctest) marks what cannot run in this suite, the reason saying where it runs instead. The
examples of one document share a namespace and run in order, as a reader would run them; each
is one test, named by its document and line.
"""

import doctest
import pathlib
import unittest

import pytest
from sybil import Sybil
from sybil.evaluators.skip import Skipper
from sybil.parsers.markdown import PythonCodeBlockParser, SkipParser

try:
  import jax_threshold._native  # noqa: F401  (the docs show the package with its extension)
except ImportError:
  pytest.skip(
    "the docs' examples use the compiled extension, which this jax_threshold lacks "
    "(pip install '.[test]' builds it)",
    allow_module_level=True,
  )

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCUMENTS = ["README.md"] + sorted(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md"))

_SYBIL = Sybil(
  parsers=[
    PythonCodeBlockParser(doctest_optionflags=doctest.NORMALIZE_WHITESPACE),
    SkipParser(),
  ],
  path="..",
  patterns=DOCUMENTS,
)


class _Document:
  """One parsed document: its examples, and how far they have been run."""

  def __init__(self, name):
    self.examples = list(_SYBIL.parse(ROOT / name))
    self.next = 0
    self.failed = None  # the first earlier example that failed, as "line N: message"

  def run_through(self, index):
    """Runs example `index`, after those before it that have not run yet."""
    # Those run here only when a selection (-k) left out their own tests.
    while self.next < index:
      example = self.examples[self.next]
      self.next += 1
      try:
        example.evaluate()
      except unittest.SkipTest:
        pass
      except Exception as e:  # reported by the example that depends on it
        self.failed = self.failed or f"line {example.line}: {type(e).__name__}: {e}"
    self.next = index + 1
    if self.failed:
      pytest.fail(f"an earlier example of this document failed ({self.failed})")
    try:
      self.examples[index].evaluate()
    except unittest.SkipTest as e:
      pytest.skip(str(e))


_DOCS = {name: _Document(name) for name in DOCUMENTS}


def _cases():
  for name, document in _DOCS.items():
    for index, example in enumerate(document.examples):
      if not isinstance(example.region.evaluator, Skipper):  # the directive is not an example
        yield pytest.param(name, index, id=f"{name}:{example.line}")


def test_every_document_has_examples():
  counted = {name: 0 for name in DOCUMENTS}
  for case in _cases():
    counted[case.values[0]] += 1
  for name in ("README.md", "docs/custom_vjp.md"):
    assert counted[name] > 0, f"Sybil found no Python examples in {name}"


@pytest.mark.parametrize("name, index", list(_cases()))
def test_example(name, index):
  _DOCS[name].run_through(index)
