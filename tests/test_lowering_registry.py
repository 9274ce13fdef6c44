"""The extension point the FFI module uses: `register_lowering_implementation`.

Registrations are process-global and permanent, so each scenario runs in a
fresh Python process with a stand-in "ffi" lowering (the reference computation
under another name), then checks how the primitive dispatches.
"""

import os
import subprocess
import sys
import textwrap

from absl.testing import absltest

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_PRELUDE = """
import jax, jax.numpy as jnp, numpy as np
from jax import export
from jax.interpreters import mlir
import jax_threshold as jt
from jax_threshold import lowering, reference

calls = []
def fake_ffi_body(g, x, t, **params):
  calls.append(params["implementation"])
  return reference.threshold_backward_reference(g, x, t) + jnp.zeros((), g.dtype)
fake_ffi = mlir.lower_fun(fake_ffi_body, multiple_results=False)
x = np.array([0.0, 1.0, 2.0], np.float32)
f = lambda x: jt.threshold_backward(x, x, 0.5)
"""


def _run(script):
  env = dict(os.environ, PYTHONPATH=_ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
  env.pop("JAX_THRESHOLD_IMPLEMENTATION", None)
  proc = subprocess.run(
    [sys.executable, "-c", _PRELUDE + textwrap.dedent(script)],
    capture_output=True,
    text=True,
    env=env,
    timeout=120,
  )
  return proc


class LoweringRegistryTest(absltest.TestCase):
  def assertRuns(self, script):
    proc = _run(script)
    self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)

  def test_registered_ffi_is_used_when_asked_and_by_auto_only_if_chosen(self):
    self.assertRuns("""
      if "ffi" in jt.available_implementations():
        raise SystemExit(0)  # the real extension is built; nothing to stand in for
      jt.register_lowering_implementation("ffi", fake_ffi, platform="cpu",
                                          ffi_targets=("fake_target_v1",))
      assert jt.available_implementations() == ("reference", "ffi"), jt.available_implementations()
      assert jt.ffi_targets() == ("fake_target_v1",)
      with jt.implementation("ffi"):
        np.testing.assert_array_equal(jax.jit(f)(x), [0.0, 1.0, 2.0])
      assert calls == ["ffi"], calls
      jax.jit(f)(x)  # default "auto": not chosen for auto, so the reference
      assert calls == ["ffi"], calls
      # "ffi" on a platform without an ffi lowering is a clear error.
      with jt.implementation("ffi"):
        try:
          export.export(jax.jit(f), platforms=["cuda"])(x)
        except NotImplementedError as e:
          assert "no lowering for platform 'cuda'" in str(e), e
        else:
          raise AssertionError("expected an error")
      # The reference lowers for any platform.
      with jt.implementation("reference"):
        export.export(jax.jit(f), platforms=["cuda", "cpu"])(x)
    """)

  def test_a_multi_platform_export_names_the_platform_without_the_lowering(self):
    self.assertRuns("""
      if "ffi" not in jt.available_implementations():
        jt.register_lowering_implementation("ffi", fake_ffi, platform="cpu")
      checks = [export.DisabledSafetyCheck.custom_call(t) for t in jt.ffi_targets()]
      with jt.implementation("ffi"):
        for platforms in (["cpu", "cuda"], ["cuda", "cpu"]):
          try:
            export.export(jax.jit(f), platforms=platforms, disabled_checks=checks)(x)
          except NotImplementedError as e:
            assert "has no lowering for platform 'cuda' " in str(e), e
          else:
            raise AssertionError("expected an error")
    """)

  def test_auto_resolves_per_platform(self):
    self.assertRuns("""
      if "ffi" in jt.available_implementations():
        raise SystemExit(0)
      jt.register_lowering_implementation("ffi", fake_ffi, platform="cpu", use_for_auto=True)
      np.testing.assert_array_equal(jax.jit(f)(x), [0.0, 1.0, 2.0])
      assert calls == ["auto"], calls
      with jt.implementation("reference"):
        jax.jit(f)(x)
      assert calls == ["auto"], calls
      export.export(jax.jit(f), platforms=["cuda"])(x)  # auto is the reference there
    """)

  def test_only_known_names_can_register(self):
    self.assertRuns("""
      for name in ("auto", "reference", "triton"):
        try:
          jt.register_lowering_implementation(name, fake_ffi)
        except ValueError:
          pass
        else:
          raise AssertionError(name)
    """)


if __name__ == "__main__":
  absltest.main()
