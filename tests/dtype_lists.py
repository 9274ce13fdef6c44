"""The dtype and SoC lists the tests run over, derived from the Python contract
(`jax_threshold._dtypes`) and the native table (`jax_threshold._native`): a row added there is
in every test that runs over its kind, and one that is not supported is found by asking, never
written down. `test_native_tables.py` checks the two tables against each other, and that the
sweeps claiming every row run every row.
"""

import itertools

import jax.numpy as jnp
import ml_dtypes
import numpy as np

from jax_threshold import _dtypes

try:
  from jax_threshold import _native  # type: ignore[attr-defined]
except ImportError:  # a source tree without the compiled extension: the executor's tests skip
  _native = None

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

# The SoC rows; those phase one runs kernels on (at some threshold), and those it refuses.
SOCS = tuple(_native.SOCS) if _native else ()
KERNEL_SOCS = tuple(s for s in SOCS if _native.SOC_ZERO_THRESHOLD_DTYPES[s])
REFUSED_SOCS = tuple(s for s in SOCS if s not in KERNEL_SOCS)

# ThresholdGradV2D's and ReluGrad's UB divisor `ub_data_number` per dtype (docs/behaviour.md §3):
# how many tile-sized buffers a kernel keeps in UB. A kernel dtype missing here fails the tiling
# tests until its divisor is written down (here and in the docs).
UB_DIVISORS = {
  "float32": 7,
  "float16": 7,
  "int32": 8,
  "bfloat16": 10,
  "int8": 14,
  "uint8": 14,
  "int64": 8,
  "float64": 8,
}


def by_row(**axes) -> list[dict]:
  """Cases for `parameterized.named_parameters`: the product of `axes`, each case named after its
  value of the first axis (a SoC name or a dtype: a row), then its index among that row's cases
  (always there, so that a row named like "Ascend910_93" is not read as "Ascend910", case 93).
  So a sweep's cases say which rows it runs (`test_native_tables.RowCoverageTest` reads them).
  """
  (row_axis, rows), *others = axes.items()
  names = [name for name, _ in others]
  cases = []
  for row in rows:
    label = row if isinstance(row, str) else np.dtype(row).name
    combos = list(itertools.product(*(values for _, values in others)))
    for i, combo in enumerate(combos):
      cases.append({"testcase_name": f"_{label}_{i}", row_axis: row, **dict(zip(names, combo))})
  return cases


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
