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
  """The directory to add to the include path: `#include "jax_threshold/aclnn_threshold_backward.h"`."""
  return os.path.join(_PACKAGE_DIR, "include")


def get_lib() -> str:
  """The directory holding libjax_threshold_aclnn.so (link with -ljax_threshold_aclnn)."""
  return os.path.join(_PACKAGE_DIR, "lib")
