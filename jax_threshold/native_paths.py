"""Where the installed package keeps the executor's C++ header and shared library.

    g++ ... -I$(python -c "import jax_threshold; print(jax_threshold.get_include())") \
        -L$(python -c "import jax_threshold; print(jax_threshold.get_lib())") -ljax_threshold_aclnn

Wheel layout (cpp/CMakeLists.txt installs it):
    jax_threshold/include/jax_threshold/aclnn_threshold_backward.h
    jax_threshold/lib/libjax_threshold_aclnn.so
"""

import importlib.machinery
import importlib.metadata
import os

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
DISTRIBUTION = "jax-threshold"

LIBRARY_NAME = "jax_threshold_aclnn"


def get_include() -> str:
  """The directory holding the executor's C++ header.

  Returns:
    A path to add to the include path, for
    `#include "jax_threshold/aclnn_threshold_backward.h"`.

  Raises:
    RuntimeError: (from `jax_threshold.get_include`) the package was not built.

  Example:
    >>> jax_threshold.get_include()
    '.../site-packages/jax_threshold/include'
  """
  return os.path.join(_PACKAGE_DIR, "include")


def get_lib() -> str:
  """The directory holding the executor's shared library.

  Returns:
    The directory of libjax_threshold_aclnn.so: link with
    `-L<get_lib()> -ljax_threshold_aclnn` (and an rpath to it).

  Raises:
    RuntimeError: (from `jax_threshold.get_lib`) the package was not built.

  Example:
    >>> jax_threshold.get_lib()
    '.../site-packages/jax_threshold/lib'
  """
  return os.path.join(_PACKAGE_DIR, "lib")


def source_tree_shadowing() -> str | None:
  """Why the native extension is missing when a source tree hides the installed package, or None.

  The typical case: `pip install .`, then `python` in the repository root, where the checkout's
  `jax_threshold/` (no compiled `_aclnn_ext`) comes first on sys.path. Detected as: the imported
  package has no `_aclnn_ext`, but an installed jax-threshold distribution has one elsewhere.
  """
  if any(
    os.path.exists(os.path.join(_PACKAGE_DIR, "_aclnn_ext" + suffix))
    for suffix in importlib.machinery.EXTENSION_SUFFIXES
  ):
    return None
  try:
    dist = importlib.metadata.distribution(DISTRIBUTION)
  except importlib.metadata.PackageNotFoundError:
    return None
  located = [
    str(dist.locate_file(f))
    for f in dist.files or ()
    if f.parts[:1] == ("jax_threshold",) and f.name.startswith("_aclnn_ext.")
  ]
  installed = [os.path.dirname(os.path.abspath(f)) for f in located if os.path.exists(f)]
  if not installed or any(os.path.samefile(d, _PACKAGE_DIR) for d in installed):
    return None
  tree = os.path.dirname(_PACKAGE_DIR)
  if os.path.abspath(os.getcwd()) == tree:
    where = "the source tree in the current directory"
    remedy = "run from another directory"
  else:
    where = f"the source tree at {tree}"
    remedy = "take it off sys.path (PYTHONPATH) or run from another directory"
  return (
    f"{where} shadows the installed jax-threshold; {remedy} (the installed package, "
    f"with its native extension: {installed[0]})"
  )
