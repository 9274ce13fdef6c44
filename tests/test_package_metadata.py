"""What the installed package declares about itself: version, license, type information."""

import importlib.metadata
import inspect
import os

from absl.testing import absltest

import jax_threshold

_PACKAGE_DIR = os.path.dirname(os.path.abspath(jax_threshold.__file__))


def _installed_distribution():
  """The jax-threshold distribution that `jax_threshold` was imported from, else None."""
  try:
    dist = importlib.metadata.distribution("jax-threshold")
  except importlib.metadata.PackageNotFoundError:
    return None
  init = dist.locate_file("jax_threshold/__init__.py")
  return dist if os.path.abspath(str(init)) == os.path.abspath(jax_threshold.__file__) else None


class MetadataTest(absltest.TestCase):
  def test_version_is_a_release_string(self):
    parts = jax_threshold.__version__.split(".")
    self.assertGreaterEqual(len(parts), 3)
    self.assertTrue(all(p.isdigit() for p in parts[:3]), jax_threshold.__version__)

  def test_version_equals_the_installed_metadata(self):
    dist = _installed_distribution()
    if dist is None:
      self.skipTest("jax_threshold is not imported from an installed distribution")
    self.assertEqual(jax_threshold.__version__, dist.version)

  def test_license_ships_with_the_distribution(self):
    dist = _installed_distribution()
    if dist is None:
      self.skipTest("jax_threshold is not imported from an installed distribution")
    self.assertEqual(dist.metadata["License-Expression"], "Apache-2.0")
    licenses = [f for f in dist.files or () if f.name == "LICENSE"]
    self.assertLen(licenses, 1)
    self.assertIn("Apache License", licenses[0].read_text())

  def test_the_package_is_marked_typed(self):
    self.assertTrue(os.path.isfile(os.path.join(_PACKAGE_DIR, "py.typed")))


def _public_functions():
  functions = [
    jax_threshold.threshold_backward,
    jax_threshold.threshold,
    jax_threshold.implementation.__wrapped__,
    jax_threshold.available_implementations,
    jax_threshold.ffi_targets,
  ]
  try:
    from jax_threshold import aclnn  # pylint: disable=import-outside-toplevel
  except ImportError:  # no native extension
    return functions
  return functions + [
    aclnn.acl_dtype,
    aclnn.threshold_backward_get_workspace_size,
    aclnn.threshold_backward,
    aclnn.recent_error_message,
    aclnn.threshold_grad_v2_d_tiling,
    aclnn.relu_grad_tiling,
  ]


class TypeHintsTest(absltest.TestCase):
  def test_public_functions_annotate_every_parameter_and_the_result(self):
    for fn in _public_functions():
      signature = inspect.signature(fn)
      with self.subTest(fn.__qualname__):
        missing = [
          p.name for p in signature.parameters.values() if p.annotation is inspect.Parameter.empty
        ]
        self.assertEqual(missing, [])
        self.assertIsNot(signature.return_annotation, inspect.Signature.empty)


if __name__ == "__main__":
  absltest.main()
