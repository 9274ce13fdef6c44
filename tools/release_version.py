"""A release's version bump: jax_threshold/_version.py and CHANGELOG.md, nothing else.

    python tools/release_version.py ROOT X.Y.Z [YYYY-MM-DD]

sets `__version__` in ROOT/jax_threshold/_version.py (the only place the version is defined;
pyproject.toml reads it) and moves CHANGELOG.md's "Unreleased" entries under a new
"## [X.Y.Z] - date" heading, leaving an empty "Unreleased" section above it. It refuses a
malformed version, a version that is not above the current one, a version CHANGELOG.md already
has, and an empty "Unreleased" section. tools/release calls it for `--version`.
"""

import datetime
import os
import re
import sys

VERSION_FILE = os.path.join("jax_threshold", "_version.py")
CHANGELOG = "CHANGELOG.md"
_VERSION = re.compile(r'^__version__ = "([^"]+)"$', re.M)
_UNRELEASED = "## [Unreleased]"


def _parse(version):
  if not re.fullmatch(r"\d+\.\d+\.\d+", version):
    raise ValueError(f"version {version!r} is not of the form X.Y.Z")
  return tuple(int(p) for p in version.split("."))


def current_version(root):
  with open(os.path.join(root, VERSION_FILE), encoding="utf-8") as f:
    match = _VERSION.search(f.read())
  if match is None:
    raise ValueError(f"{VERSION_FILE} defines no __version__")
  return match.group(1)


def bumped_changelog(text, version, date):
  """CHANGELOG.md's text with the Unreleased entries under `## [version] - date`."""
  if re.search(rf"^## \[{re.escape(version)}\]", text, re.M):
    raise ValueError(f"{CHANGELOG} already has a section for {version}")
  start = text.find(_UNRELEASED + "\n")
  if start < 0:
    raise ValueError(f"{CHANGELOG} has no '{_UNRELEASED}' section")
  body_start = start + len(_UNRELEASED) + 1
  following = re.search(r"^## ", text[body_start:], re.M)
  body_end = body_start + following.start() if following else len(text)
  entries = text[body_start:body_end].strip("\n")
  if not any(line.strip() and not line.startswith("#") for line in entries.splitlines()):
    raise ValueError(f"{CHANGELOG}'s '{_UNRELEASED}' section is empty: nothing to release")
  released = f"{_UNRELEASED}\n\n## [{version}] - {date}\n\n{entries}\n\n"
  return text[:start] + released + text[body_end:]


def bump(root, version, date):
  """Writes the new version into _version.py and CHANGELOG.md under `root`."""
  old = current_version(root)
  if _parse(version) <= _parse(old):
    raise ValueError(f"version {version} is not above the current version {old}")
  changelog_path = os.path.join(root, CHANGELOG)
  with open(changelog_path, encoding="utf-8") as f:
    changelog = bumped_changelog(f.read(), version, date)
  version_path = os.path.join(root, VERSION_FILE)
  with open(version_path, encoding="utf-8") as f:
    source = f.read()
  with open(version_path, "w", encoding="utf-8") as f:
    f.write(_VERSION.sub(f'__version__ = "{version}"', source, count=1))
  with open(changelog_path, "w", encoding="utf-8") as f:
    f.write(changelog)


def main(argv):
  if len(argv) not in (3, 4):
    sys.exit(__doc__)
  date = argv[3] if len(argv) == 4 else datetime.date.today().isoformat()
  try:
    bump(argv[1], argv[2], date)
  except ValueError as e:
    sys.exit(f"release: {e}")


if __name__ == "__main__":
  main(sys.argv)
