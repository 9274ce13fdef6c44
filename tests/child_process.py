"""A child Python on the jax_threshold under test, for checks that could crash the process."""

import os
import subprocess
import sys

import jax_threshold

_TESTS_DIR = os.path.dirname(os.path.abspath(__file__))


def run_child(args, *, timeout, cpu=False, devices=None):
  """Runs `python *args` with the package under test and the tests directory importable.

  cpu: JAX on the CPU only. devices: that many CPU devices (implies cpu); XLA reads the flag
  once, when JAX starts, so only a new process can have a different count.
  """
  package_root = os.path.dirname(os.path.dirname(os.path.abspath(jax_threshold.__file__)))
  env = dict(os.environ)
  env["PYTHONPATH"] = os.pathsep.join([package_root, _TESTS_DIR, env.get("PYTHONPATH", "")])
  if cpu or devices is not None:
    env["JAX_PLATFORMS"] = "cpu"
  if devices is not None:
    env["XLA_FLAGS"] = (
      env.get("XLA_FLAGS", "") + f" --xla_force_host_platform_device_count={devices}"
    )
  # cwd: `python -c` puts the working directory first on sys.path, where a checkout's source
  # tree (without the compiled extension) would shadow the package under test.
  return subprocess.run(
    [sys.executable, *args],
    env=env,
    capture_output=True,
    text=True,
    timeout=timeout,
    check=False,
    cwd=package_root,
  )
