"""tools/release's rules that need no build: the version bump and the refusal of a dirty tree.

The build itself (sdist, wheels, twine, auditwheel, SHA256SUMS, installs without a compiler) is
what `tools/release` runs end to end; .ci/run's release check runs it.
"""

import importlib.util
import os
import pathlib
import re
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
TOOLS = ROOT / "tools"

if not (TOOLS / "release").is_file():
  pytest.skip("no tools/ beside these tests", allow_module_level=True)

_spec = importlib.util.spec_from_file_location("release_version", TOOLS / "release_version.py")
release_version = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(release_version)

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
