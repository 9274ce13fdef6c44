"""Where the installed package keeps the executor's C++ header and shared library.

    g++ ... -I$(python -c "import jax_threshold; print(jax_threshold.get_include())") \
        -L$(python -c "import jax_threshold; print(jax_threshold.get_lib())") -ljax_threshold_aclnn

Wheel layout (cpp/CMakeLists.txt installs it):
    jax_threshold/include/jax_threshold/aclnn_threshold_backward.h
    jax_threshold/lib/libjax_threshold_aclnn.so
"""

import os

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))

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
