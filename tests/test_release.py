"""tools/release's rules that need no build: the version bump, the refusal of a dirty tree, what
every wheel must hold (tools/check_wheel.py, on hand-made wheels) and that a release builds and
checks the aarch64 wheels through tools/cross/aarch64.sh's steps.

The build itself (sdist, wheels, twine, auditwheel, SHA256SUMS, installs without a compiler) is
what `tools/release` runs end to end; .ci/run's release check runs it.
"""

import importlib.util
import os
import pathlib
import re
import shutil
import subprocess
import sys
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
TOOLS = ROOT / "tools"

if not (TOOLS / "release").is_file():
  pytest.skip("no tools/ beside these tests", allow_module_level=True)

_spec = importlib.util.spec_from_file_location("release_version", TOOLS / "release_version.py")
release_version = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(release_version)
_spec = importlib.util.spec_from_file_location("check_wheel", TOOLS / "check_wheel.py")
check_wheel = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_wheel)

CHANGELOG = """# Changelog

Intro.

## [Unreleased]

### Added
- A thing.

## [0.1.0]

### Added
- The first things.
"""


def _project(tmp_path, changelog=CHANGELOG, version="0.1.0"):
  (tmp_path / "jax_threshold").mkdir()
  (tmp_path / "jax_threshold" / "_version.py").write_text(
    f'"""The package version."""\n\n__version__ = "{version}"\n'
  )
  (tmp_path / "CHANGELOG.md").write_text(changelog)
  return tmp_path


def test_bump_moves_the_unreleased_entries_under_the_version_and_date(tmp_path):
  root = _project(tmp_path)
  release_version.bump(str(root), "0.2.0", "2026-12-02")
  assert release_version.current_version(str(root)) == "0.2.0"
  assert (root / "CHANGELOG.md").read_text() == (
    "# Changelog\n\nIntro.\n\n## [Unreleased]\n\n## [0.2.0] - 2026-12-02\n\n"
    "### Added\n- A thing.\n\n## [0.1.0]\n\n### Added\n- The first things.\n"
  )


def test_bump_with_no_older_release(tmp_path):
  root = _project(tmp_path, changelog="# Changelog\n\n## [Unreleased]\n\n- A thing.\n")
  release_version.bump(str(root), "0.1.1", "2026-12-02")
  assert (root / "CHANGELOG.md").read_text() == (
    "# Changelog\n\n## [Unreleased]\n\n## [0.1.1] - 2026-12-02\n\n- A thing.\n\n"
  )


@pytest.mark.parametrize(
  "version, changelog, message",
  [
    ("0.2", CHANGELOG, "not of the form X.Y.Z"),
    ("0.1.0", CHANGELOG, "not above the current version 0.1.0"),
    ("0.0.9", CHANGELOG, "not above the current version 0.1.0"),
    ("0.2.0", CHANGELOG.replace("- A thing.\n", ""), "section is empty"),
    ("0.2.0", CHANGELOG.replace("## [Unreleased]", "## Next"), "has no '## [Unreleased]'"),
    ("0.2.0", CHANGELOG + "\n## [0.2.0]\n", "already has a section for 0.2.0"),
  ],
)
def test_bump_refuses(tmp_path, version, changelog, message):
  root = _project(tmp_path, changelog=changelog)
  with pytest.raises(ValueError, match=re.escape(message)):
    release_version.bump(str(root), version, "2026-12-02")
  assert release_version.current_version(str(root)) == "0.1.0"
  assert (root / "CHANGELOG.md").read_text() == changelog


def test_the_repository_changelog_has_an_unreleased_section_and_the_current_version():
  text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
  assert "\n## [Unreleased]\n" in text
  assert f"\n## [{release_version.current_version(str(ROOT))}]" in text


@pytest.fixture
def dirty_checkout(tmp_path):
  if shutil.which("git") is None:
    pytest.skip("git is not installed")
  root = _project(tmp_path)
  (root / "tools").mkdir()
  for name in ("release", "release_version.py"):
    shutil.copy2(TOOLS / name, root / "tools" / name)
  env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t")
  env["GIT_COMMITTER_EMAIL"] = "t@t"
  for command in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "tree"]):
    subprocess.run(["git", *command], cwd=root, env=env, check=True)
  (root / "scratch.txt").write_text("not committed")
  return root


@pytest.mark.parametrize(
  "args, message",
  [
    (["--version", "0.2.0"], "uncommitted or untracked files"),
    ([], "uncommitted or untracked files"),
    (["--version", "0.2.0", "--allow-dirty"], "from a clean tree only"),
  ],
)
def test_release_refuses_a_dirty_tree(dirty_checkout, args, message):
  result = subprocess.run(
    ["bash", str(dirty_checkout / "tools" / "release"), *args], capture_output=True, text=True
  )
  assert result.returncode != 0
  assert message in result.stderr
  assert release_version.current_version(str(dirty_checkout)) == "0.1.0"
  assert (dirty_checkout / "CHANGELOG.md").read_text() == CHANGELOG


def _elf(machine):
  """The first bytes of an ELF object for `machine` (e_machine at offset 18)."""
  return b"\x7fELF" + bytes(14) + machine.to_bytes(2, "little") + bytes(44)


def _wheel(tmp_path, name, drop=(), machine=None, extra=()):
  """A wheel named `name` holding what a release wheel holds, less `drop`, plus `extra`."""
  arch = "aarch64" if "aarch64" in name else "x86_64"
  module = (
    "jax_threshold/_native.abi3.so"
    if "-abi3-" in name
    else f"jax_threshold/_native.cpython-311-{arch}-linux-gnu.so"
  )
  elf = _elf(machine if machine is not None else check_wheel.ELF_MACHINES[arch])
  members = {
    "jax_threshold/__init__.py": b"",
    "jax_threshold/py.typed": b"",
    "jax_threshold/lib/libjax_threshold_aclnn.so": elf,
    module: elf,
    "jax_threshold-0.1.0.dist-info/licenses/LICENSE": b"license",
    **dict(extra),
  }
  path = tmp_path / name
  with zipfile.ZipFile(path, "w") as z:
    for member, data in members.items():
      if member not in drop:
        z.writestr(member, data)
  return str(path)


@pytest.mark.parametrize(
  "name",
  [
    "jax_threshold-0.1.0-cp311-cp311-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl",
    "jax_threshold-0.1.0-cp312-abi3-manylinux_2_28_x86_64.whl",
    "jax_threshold-0.1.0-cp311-cp311-manylinux_2_17_aarch64.manylinux2014_aarch64.whl",
    "jax_threshold-0.1.0-cp312-abi3-manylinux_2_17_aarch64.manylinux2014_aarch64.whl",
  ],
)
def test_check_wheel_accepts_each_release_wheel(tmp_path, name):
  assert check_wheel.check(_wheel(tmp_path, name)).startswith(f"{name} ok")


CP311_AARCH64 = "jax_threshold-0.1.0-cp311-cp311-manylinux_2_17_aarch64.whl"
ABI3_X86 = "jax_threshold-0.1.0-cp312-abi3-manylinux_2_28_x86_64.whl"


@pytest.mark.parametrize(
  "name, changes, message",
  [
    (ABI3_X86.replace("2_28", "2_31"), {}, "needs glibc 2.31"),
    (ABI3_X86.replace("manylinux_2_28", "linux"), {}, "not a manylinux tag"),
    (ABI3_X86.replace("x86_64", "x86_64.manylinux_2_28_aarch64"), {}, "architectures"),
    (ABI3_X86.replace("abi3", "cp312"), {}, "not one of the ABIs"),
    (ABI3_X86, {"drop": ["jax_threshold/py.typed"]}, "no jax_threshold/py.typed"),
    (ABI3_X86, {"drop": ["jax_threshold-0.1.0.dist-info/licenses/LICENSE"]}, "no LICENSE"),
    (ABI3_X86, {"drop": ["jax_threshold/_native.abi3.so"]}, "no jax_threshold/_native"),
    (
      CP311_AARCH64,
      {"drop": ["jax_threshold/lib/libjax_threshold_aclnn.so"]},
      "no jax_threshold/lib/libjax_threshold_aclnn.so",
    ),
    (CP311_AARCH64, {"machine": 62}, "is not an aarch64 ELF object (e_machine 62)"),
    (ABI3_X86, {"machine": 183}, "is not an x86_64 ELF object (e_machine 183)"),
    (
      CP311_AARCH64,
      {"extra": [("jax_threshold.libs/libz-1a2b.so.1.2.13", _elf(62))]},
      "libz-1a2b.so.1.2.13 is not an aarch64 ELF object",
    ),
  ],
)
def test_check_wheel_refuses(tmp_path, name, changes, message):
  path = _wheel(tmp_path, name, **changes)
  with pytest.raises(ValueError, match=re.escape(message)):
    check_wheel.check(path)
  result = subprocess.run(
    [sys.executable, str(TOOLS / "check_wheel.py"), path], capture_output=True, text=True
  )
  assert result.returncode == 1 and message in result.stderr


def test_a_release_builds_checks_and_smokes_the_aarch64_wheels_through_aarch64_sh():
  """One definition of the aarch64 steps: the release calls tools/cross/aarch64.sh's steps on its
  own sdist and dist/ (so the aarch64 wheels are checksummed with the others), and both scripts
  check wheels with tools/check_wheel.py."""
  release = (TOOLS / "release").read_text()
  steps = re.findall(r"^aarch64_steps ([\w -]+)$", release, flags=re.M)
  assert steps == ["sysroot wheels", "python-tests"]
  assert release.index("aarch64_steps sysroot wheels") < release.index("\nwrite_checksums\n")
  assert 'SDIST="$SDIST" OUT="$OUT"' in release
  for script in (release, (TOOLS / "cross" / "aarch64.sh").read_text()):
    assert "tools/check_wheel.py" in script
  ci = (ROOT / ".ci" / "run").read_text() if (ROOT / ".ci" / "run").is_file() else ""
  if ci:  # CI's aarch64 section runs what the release does not, and builds no wheel again
    assert re.findall(r"tools/cross/aarch64\.sh ([\w -]+)$", ci, flags=re.M) == [
      "sysroot cpp-tests"
    ]
