"""Two builds from one checkout at once do not collide.

pyproject.toml sets no scikit-build build directory, so each build configures CMake in a
temporary directory of its own, outside the tree. This test runs two `pip wheel` of the checkout
at the same time and checks that both succeed, that each wheel holds the compiled extension and
that no build directory appeared in the checkout.

Two full builds take minutes on 2 cores: the test runs when JAX_THRESHOLD_SLOW_TESTS=1 (.ci/run's
"Two builds at once" section sets it) and needs this Python to have the build requirements
(scikit-build-core, nanobind, jaxlib), since it builds without pip's isolation.
"""

import importlib.util
import os
import pathlib
import shutil
import subprocess
import sys
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(
  os.environ.get("JAX_THRESHOLD_SLOW_TESTS") != "1",
  reason="builds the package twice at once (minutes): set JAX_THRESHOLD_SLOW_TESTS=1, as .ci/run does",
)


def _build_dirs():
  """The directories a build could leave in the checkout."""
  return sorted(str(p.relative_to(ROOT)) for p in ROOT.glob("build/*")) + sorted(
    p.name for p in ROOT.glob("_skbuild")
  )


def test_two_builds_from_one_checkout_at_once(tmp_path):
  missing = [
    m for m in ("scikit_build_core", "nanobind", "jaxlib") if not importlib.util.find_spec(m)
  ]
  if missing:
    pytest.skip(f"the build requirements {missing} are not installed in this Python")
  defines = []
  if shutil.which("ccache"):
    defines.append("-Ccmake.define.CMAKE_CXX_COMPILER_LAUNCHER=ccache")
  env = dict(os.environ, CMAKE_BUILD_PARALLEL_LEVEL="1")
  before = _build_dirs()
  builds = []
  for i in range(2):
    out = tmp_path / f"wheels{i}"
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
    command += [*defines, "-w", str(out), str(ROOT)]
    log = open(tmp_path / f"build{i}.log", "wb")
    builds.append(
      (out, log, subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env))
    )
  for out, log, process in builds:
    process.wait()
    log.close()
    text = pathlib.Path(log.name).read_text(errors="replace")
    assert process.returncode == 0, f"a build failed while another ran:\n{text[-4000:]}"
    wheels = list(out.glob("jax_threshold-*.whl"))
    assert len(wheels) == 1, wheels
    names = zipfile.ZipFile(wheels[0]).namelist()
    assert any(n.startswith("jax_threshold/_native") for n in names), names
  assert _build_dirs() == before, "a build left its directory in the checkout"
