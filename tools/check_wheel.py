"""What every wheel of a release holds; tools/release and tools/cross/aarch64.sh check each with it.

  python tools/check_wheel.py WHEEL...

A wheel passes when its platform tags are manylinux ones of one architecture (x86_64 or
aarch64) that need glibc 2.28 at most; it holds py.typed, the executor library, LICENSE and the
extension module of its ABI (cp311's named for its architecture, or abi3's); and every shared
object in it is an ELF object of that architecture.
"""

import os
import re
import sys
import zipfile

# ELF e_machine of each architecture a wheel is built for.
ELF_MACHINES = {"x86_64": 62, "aarch64": 183}
# manylinux tags older than PEP 600's form, and the glibc each stands for.
LEGACY_GLIBC = {"manylinux1": 5, "manylinux2010": 12, "manylinux2014": 17}
NEWEST_GLIBC = 28
ABI_TAGS = ("cp311-cp311", "cp312-abi3")


def _platform(name: str) -> tuple[str, int]:
  """The architecture of a wheel's platform tags and the newest glibc they need."""
  arch, glibc = set(), []
  for tag in name[: -len(".whl")].rsplit("-", 1)[-1].split("."):
    m = re.fullmatch(r"manylinux_2_(\d+)_(\w+)", tag) or re.fullmatch(
      r"(manylinux1|manylinux2010|manylinux2014)_(\w+)", tag
    )
    if m is None:
      raise ValueError(f"{name}: platform tag {tag} is not a manylinux tag")
    glibc.append(LEGACY_GLIBC.get(m.group(1)) or int(m.group(1)))
    arch.add(m.group(2))
  if len(arch) != 1 or not arch <= ELF_MACHINES.keys():
    raise ValueError(f"{name}: architectures {sorted(arch)}, not one of {sorted(ELF_MACHINES)}")
  return arch.pop(), max(glibc)


def check(path: str) -> str:
  """Checks the wheel at `path`; raises ValueError naming what is wrong, else describes it."""
  name = os.path.basename(path)
  abi = next((a for a in ABI_TAGS if f"-{a}-" in name), None)
  if abi is None:
    raise ValueError(f"{name}: not one of the ABIs {', '.join(ABI_TAGS)}")
  arch, glibc = _platform(name)
  if glibc > NEWEST_GLIBC:
    raise ValueError(f"{name}: needs glibc 2.{glibc}, newer than manylinux_2_{NEWEST_GLIBC}")
  with zipfile.ZipFile(path) as wheel:
    names = wheel.namelist()
    module = (
      "jax_threshold/_native.abi3.so"
      if abi == "cp312-abi3"
      else f"jax_threshold/_native.cpython-311-{arch}-linux-gnu.so"
    )
    for wanted in ("jax_threshold/py.typed", "jax_threshold/lib/libjax_threshold_aclnn.so", module):
      if wanted not in names:
        raise ValueError(f"{name}: no {wanted}")
    if not any(n.endswith(".dist-info/licenses/LICENSE") for n in names):
      raise ValueError(f"{name}: no LICENSE in its .dist-info")
    for member in names:
      if re.search(r"\.so(\.\d+)*$", member):
        head = wheel.read(member)[:20]
        machine = int.from_bytes(head[18:20], "little")
        if head[:4] != b"\x7fELF" or machine != ELF_MACHINES[arch]:
          raise ValueError(f"{name}: {member} is not an {arch} ELF object (e_machine {machine})")
  return f"{name} ok: {arch}, glibc 2.{glibc} at most, {module.rsplit('/', 1)[-1]}"


def main(paths: list[str]) -> int:
  if not paths:
    print(__doc__.strip(), file=sys.stderr)
    return 2
  for path in paths:
    try:
      print(check(path))
    except (ValueError, OSError, zipfile.BadZipFile) as e:
      print(f"check_wheel: {e}", file=sys.stderr)
      return 1
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
