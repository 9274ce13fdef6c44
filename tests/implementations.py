"""Runs a test class once per available implementation of threshold_backward.

`IMPLEMENTATIONS` is `jax_threshold.available_implementations()`: ("reference",)
from a source checkout, ("reference", "ffi") once the native extension is
built. Decorate a test class with `@for_each_implementation`: every test method
(including absl-parameterized ones) is replaced by one copy per implementation,
named `<test>__<impl>`, that runs inside `jax_threshold.implementation(impl)`.
The FFI path therefore runs the same tests unchanged.
"""

import functools

import jax_threshold as jt

IMPLEMENTATIONS = jt.available_implementations()


def _run_inside(method, impl):
  @functools.wraps(method)
  def wrapper(self, *args, **kwargs):
    self.implementation = impl
    with jt.implementation(impl):
      return method(self, *args, **kwargs)

  return wrapper


def for_each_implementation(cls):
  for name, method in list(vars(cls).items()):
    if name.startswith("test") and callable(method):
      delattr(cls, name)
      for impl in IMPLEMENTATIONS:
        wrapped = _run_inside(method, impl)
        wrapped.__name__ = f"{name}__{impl}"
        setattr(cls, wrapped.__name__, wrapped)
  return cls
