"""pytest set-up: which copy of jax_threshold the tests import.

`python -m pytest` from a checkout puts the checkout first on sys.path, where `jax_threshold/`
is the pure-Python source without the compiled `_native` extension. When the package is also
installed (the README's `pip install '.[test]'`), test the installed copy instead, so the FFI
and executor tests run against what pip built.
"""

import importlib.machinery
import os
import sys

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_TESTS = os.path.join(_ROOT, "tests")


def _is_root(entry):
  return os.path.abspath(entry or os.curdir) == _ROOT


def _prefer_installed_package():
  if os.environ.get("JAX_THRESHOLD_TEST_SOURCE_TREE"):
    return
  others = [p for p in sys.path if not _is_root(p)]
  if importlib.machinery.PathFinder.find_spec("jax_threshold", others) is not None:
    sys.path[:] = others
    for name in [m for m in sys.modules if m == "jax_threshold" or m.startswith("jax_threshold.")]:
      del sys.modules[name]


_prefer_installed_package()
if _TESTS not in sys.path:
  sys.path.insert(0, _TESTS)  # shared helpers: `import oracle`, `import implementations`
