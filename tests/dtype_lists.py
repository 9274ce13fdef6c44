"""The dtype lists the tests run over, derived from the Python contract (`jax_threshold._dtypes`):
a dtype added there is in every test that runs over a kind of dtype, and one that is not supported
is found by asking the contract, never written down.

The executor's tests take their per-SoC lists from the native table (`jax_threshold._aclnn_ext`:
`SOC_DTYPES`, `SOC_ZERO_THRESHOLD_DTYPES`), which `test_native_tables.py` checks against this.
"""

import jax.numpy as jnp
import ml_dtypes
import numpy as np

from jax_threshold import _dtypes

SUPPORTED = _dtypes.SUPPORTED_DTYPES
FLOATS = tuple(d for d in SUPPORTED if _dtypes.is_floating(d))
INTEGERS = tuple(d for d in SUPPORTED if _dtypes.is_integer(d))
NARROW_FLOATS = _dtypes.NARROW_FLOAT_DTYPES  # compared in float32

# What JAX holds without x64 (the 64-bit ones need it).
CANONICAL = tuple(d for d in SUPPORTED if d in _dtypes.CANONICAL_DTYPES)
CANONICAL_INTEGERS = tuple(d for d in INTEGERS if d in _dtypes.CANONICAL_DTYPES)
X64_ONLY = tuple(d for d in SUPPORTED if d not in _dtypes.CANONICAL_DTYPES)
# An integer dtype that NumPy and JAX (without x64) hold and the contract refuses.
UNSUPPORTED_INTEGER = next(
  np.dtype(t)
  for t in sorted(set(np.sctypeDict.values()), key=str)
  if np.dtype(t).kind in "iu" and np.dtype(t).itemsize < 8 and np.dtype(t) not in SUPPORTED
)
# The first of each item size, for tests whose cost grows with the dtypes they run.
ONE_PER_ITEMSIZE = tuple({d.itemsize: d for d in reversed(CANONICAL)}.values())


def by_name(name: str) -> np.dtype:
  """The NumPy dtype of a name, ml_dtypes' (bfloat16, float8_*) included."""
  return np.dtype(getattr(ml_dtypes, name, None) or name)


def numeric_dtypes() -> list[np.dtype]:
  """Every dtype NumPy and ml_dtypes define that is a bool or a number."""
  types = set(np.sctypeDict.values())
  types |= {
    t for t in vars(ml_dtypes).values() if isinstance(t, type) and issubclass(t, np.generic)
  }
  dtypes = {np.dtype(t) for t in types}
  return sorted((d for d in dtypes if d.kind in "biufcV" and d.fields is None), key=str)


def unsupported_jax_dtypes() -> list[np.dtype]:
  """The dtypes a JAX array holds (in the current x64 mode) that the contract refuses."""
  held = []
  for dtype in numeric_dtypes():
    if dtype in SUPPORTED:
      continue
    try:
      array = jnp.asarray(np.zeros(16, dtype)).block_until_ready()
    except Exception:  # noqa: BLE001  # a dtype this JAX cannot hold (its errors vary)
      continue
    if np.dtype(array.dtype) == dtype:
      held.append(dtype)
  return held
