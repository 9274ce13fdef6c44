"""A seeded, time-bounded fuzz test of the executor's Python face (jax_threshold.aclnn).

Every case draws dtypes (supported and not, mismatched, byte-swapped), shapes (rank 0-9, empty,
broadcast, incompatible, huge zero-stride views), layouts (permuted, negative, zero, stepped
strides, strides of a fractional element count, element-unaligned data, out overlapping an input partly or exactly, self-overlapping
out), a SoC, platform parameters (valid and hostile) and a threshold of any type (ints of any
size, floats, Fraction, Decimal, NumPy scalars, 0-d arrays, bool, complex, None, str).

All tensors are views into one byte arena. A case must either be refused cleanly -- a Python
TypeError/ValueError, or a nonzero status with no executor -- exactly when an independent
model of the contract (below) says it is invalid, or succeed, and then the whole arena must equal
its old bytes with only out's view rewritten to the oracle's values (tests/oracle.py, from copies
of the inputs taken before the call: copy semantics; a self-overlapping out holds the last value
written in C order). So nothing outside out's view changes, inputs included.

Environment:
  JAX_THRESHOLD_FUZZ_SECONDS  time budget (default 60; 0 skips the test)
  JAX_THRESHOLD_FUZZ_SEED     base seed (default 20261130); case i uses seed (base, i)
  JAX_THRESHOLD_FUZZ_CASE     run only this case index (to replay a failure)
Run it against the ASan + UBSan build of the module too (.ci/run does).
"""

import decimal
from decimal import Decimal
from fractions import Fraction
import math
import os
import time
import unittest

from absl.testing import absltest
import ml_dtypes
import numpy as np

import dtype_lists
import oracle

try:
  from jax_threshold import aclnn
except ImportError as e:  # a source tree without the compiled extension
  aclnn = None
  _SKIP = f"jax_threshold._native is not built ({e})"

SECONDS = float(os.environ.get("JAX_THRESHOLD_FUZZ_SECONDS", "60"))
SEED = int(os.environ.get("JAX_THRESHOLD_FUZZ_SEED", "20261130"))
ONLY_CASE = os.environ.get("JAX_THRESHOLD_FUZZ_CASE")

SUPPORTED = list(dtype_lists.SUPPORTED)
if aclnn is not None:
  _TABLE = aclnn._native
  # Refused: the dtypes the native table names without a kernel, and one it does not name.
  UNSUPPORTED = [np.dtype(n) for n in _TABLE.DTYPES if n not in _TABLE.KERNEL_DTYPES]
  UNSUPPORTED += [next(d for d in dtype_lists.numeric_dtypes() if d.name not in _TABLE.DTYPES)]
  # Phase one's dtypes per SoC, at any threshold and at threshold 0.
  SOC_DTYPES = {soc: set(names) for soc, names in _TABLE.SOC_DTYPES.items()}
  SOC_ZERO_DTYPES = {soc: set(names) for soc, names in _TABLE.SOC_ZERO_THRESHOLD_DTYPES.items()}
  # A real SoC's unified buffer bounds ub_size (asc-devkit TOTAL_UB_SIZE); the host has no bound.
  SOC_UB_BYTES = {soc: ub for soc, ub in _TABLE.SOC_UB_SIZE.items() if ub}
# The contract's limits (docs/behaviour.md §2 and the executor's platform check).
MAX_RANK = 8
UB_MIN, UB_MAX, UB_ALIGN, CORE_MAX = 16384, 1 << 20, 32, 4096
RUN_MAX_ELEMENTS = 25000  # phase two runs (and the oracle checks) cases up to this size
WS_CAP = 1 << 26  # bytes of workspace a case may allocate


class Refused(Exception):
  """The model says: this case must be refused."""


def _exact(threshold):
  """The threshold's exact value the model uses: a Fraction or inf/NaN float; Refused(kind) for
  what must be refused and how (an independent reading of docs/behaviour.md §1)."""
  if threshold is None:
    raise Refused("nullptr")
  if isinstance(threshold, np.ndarray):
    threshold = threshold[()]
  if isinstance(threshold, (bool, np.bool_)):
    raise Refused("type")
  if isinstance(threshold, (complex, np.complexfloating)):
    raise Refused("invalid")
  if isinstance(threshold, str):
    raise Refused("type")
  return oracle._exact(threshold)


# ---------------------------------------------------------------------------------------------
# Drawing a case.


def _shape_pair(rng):
  """(g shape, x shape, out shape, mode) -- mostly broadcastable."""
  kind = rng.random()
  if kind < 0.06:  # huge zero-stride views (workspace overflow, broadcast overflow)
    if rng.random() < 0.5:
      big = 1 << int(rng.integers(31, 34))
      return (big, 1), (1, big), (1,), "huge"
    n = int(rng.choice([512 * ((2**55 + 1) // 3), 2**62, 2**61 + 3, 2**40, 3 * 2**58]))
    return (n,), (n,), (n,), "huge"
  rank = int(rng.integers(0, MAX_RANK + 2 if rng.random() < 0.05 else MAX_RANK + 1))
  dims = [
    int(rng.choice([0, 1, 1, 2, 3, 4, 5, 7])) if rng.random() < 0.1 else int(rng.integers(1, 6))
    for _ in range(rank)
  ]
  while rank and np.prod(dims, dtype=np.int64) > 4096:
    dims[int(rng.integers(rank))] = 1
  if rng.random() < 0.25 and rank:  # one larger dim: several tiles and cores
    k = int(rng.integers(rank))
    others = max(1, math.prod(d for i, d in enumerate(dims) if i != k and d))
    dims[k] = int(rng.integers(1, 20000 // others + 2))
  shape = tuple(dims)

  def derive():
    lead = int(rng.integers(0, rank + 1))
    s = list(shape[lead:])
    for i in range(len(s)):
      if rng.random() < 0.3:
        s[i] = 1
    return tuple(s)

  g, x = derive(), derive()
  if rng.random() < 0.5:
    g = shape if rng.random() < 0.5 else g
  else:
    x = shape if rng.random() < 0.5 else x
  try:
    out = np.broadcast_shapes(g, x)
  except ValueError:
    out = shape
  if rng.random() < 0.04 and rank:  # incompatible shapes
    g = tuple(d + 1 if d > 1 else d for d in g) if g and max(g) > 1 else g
  if rng.random() < 0.04:  # wrong out shape
    out = tuple(out) + (2,)
  return g, x, tuple(out), "normal"


def _strides(shape, itemsize, rng, allow_zero):
  """Element strides for `shape`: a permuted, stepped, partly negated/zeroed layout."""
  rank = len(shape)
  order = list(range(rank))
  if rng.random() < 0.4:
    rng.shuffle(order)
  strides = [0] * rank
  step = 1
  for d in reversed(order):
    mult = int(rng.integers(1, 4)) if rng.random() < 0.3 else 1
    strides[d] = step * mult
    step = step * mult * max(shape[d], 1)
  for d in range(rank):
    if rng.random() < 0.2:
      strides[d] = -strides[d]
    if allow_zero and rng.random() < 0.1:
      strides[d] = 0
  if rng.random() < 0.35:  # plain contiguous
    strides, step = [0] * rank, 1
    for d in reversed(range(rank)):
      strides[d] = step
      step *= max(shape[d], 1)
  return [s * itemsize for s in strides]


def _extent(shape, byte_strides, itemsize):
  """(lowest, highest + itemsize) byte offsets relative to the first element."""
  lo = hi = 0
  for d, s in zip(shape, byte_strides):
    if d == 0:
      return 0, 0
    if d > 1:
      lo, hi = (lo + s * (d - 1), hi) if s < 0 else (lo, hi + s * (d - 1))
  return lo, hi + itemsize


def _dtype(rng):
  if rng.random() < 0.1:
    return UNSUPPORTED[int(rng.integers(len(UNSUPPORTED)))]
  return SUPPORTED[int(rng.integers(len(SUPPORTED)))]


def _values(dtype, shape, rng):
  """Random values with the awkward ones mixed in (NaN, inf, +-0, subnormals, extremes)."""
  n = int(np.prod(shape, dtype=np.int64))
  if dtype.kind in "iu":
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max, size=n, dtype=dtype, endpoint=True)
    pick = rng.random(n) < 0.5
    a[pick] = np.clip(rng.integers(-3, 4, size=int(pick.sum())), info.min, info.max)
    edges = rng.random(n) < 0.05
    a[edges] = rng.choice([info.min, info.max], size=int(edges.sum()))
    return a.reshape(shape)
  if dtype.kind == "b":
    return (rng.random(n) < 0.5).reshape(shape)
  if dtype.kind == "c":
    return (rng.normal(size=n) + 1j * rng.normal(size=n)).astype(dtype).reshape(shape)
  a = rng.uniform(-4, 4, size=n) * 2.0 ** rng.integers(-3, 4, size=n)
  special = np.array(
    [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, 0.5, 1e-40, -1e-40, 1e-310, 2.0**100, 65504.0, 3.0e38]
  )
  pick = rng.random(n) < 0.3
  a[pick] = rng.choice(special, size=int(pick.sum()))
  with np.errstate(over="ignore"):
    return a.astype(dtype).reshape(shape)


def _threshold(rng, x_values):
  """A threshold of any type, often near (or exactly at) a value of x."""
  near = None
  if (
    x_values is not None
    and x_values.size
    and x_values.dtype.kind in "fiuV"
    and x_values.dtype != np.bool_
  ):
    v = x_values.reshape(-1)[int(rng.integers(x_values.size))]
    try:
      near = oracle._exact(v)
    except (TypeError, ValueError):
      near = None
  if isinstance(near, float):  # inf/NaN
    near = None
  k = int(rng.integers(0, 24))
  if near is not None and k < 10:
    if k < 4:
      # Around the float32 midpoint above or below `near`, off by far less than a float64 ulp:
      # rounding via float64 first lands on the midpoint (a tie) and may go the wrong way.
      f = np.float32(near) if abs(near) < 2**127 else np.float32(2**100)
      ulp = Fraction(float(np.spacing(np.abs(f))))
      t = (
        Fraction(float(f))
        + ulp / 2 * (1 if k % 2 else -1)
        + ulp * Fraction(int(rng.choice([-1, 1])), 2 ** int(rng.integers(35, 80)))
      )
    else:
      tweak = [
        Fraction(0),
        Fraction(1, 2**24),
        -Fraction(1, 2**25),
        Fraction(1, 2**60),
        Fraction(1, 2),
        -Fraction(1, 3),
        Fraction(1, 2**1100),
        Fraction(1, 2**11),
      ]
      t = near + tweak[int(rng.integers(len(tweak)))] * (abs(near) if near else 1)
    form = int(rng.integers(0, 5))
    if form == 0:
      return t
    if form == 1:
      return float(t)
    if form == 2 and t.denominator == 1:
      return int(t)
    if form == 3:
      with decimal.localcontext() as ctx:
        ctx.prec = 80
        return Decimal(t.numerator) / Decimal(t.denominator)
    return np.float32(t) if rng.random() < 0.5 else np.float64(t)
  choices = [
    lambda: int(rng.integers(-300, 300)),
    lambda: int(
      rng.choice(
        [
          2**63 - 1,
          -(2**63),
          -(2**63) - 1,
          2**63,
          2**64 - 1,
          2**64,
          2**1024,
          -(2**1024) - 1,
          2**5000,
          -(2**70) + 1,
        ]
      )
    ),
    lambda: float(
      rng.choice(
        [0.0, -0.0, 0.5, -1.5, 1e-9, 1e-40, 1e-50, 3.4e38, 1e300, math.inf, -math.inf, math.nan]
      )
    ),
    lambda: float(rng.normal() * 2.0 ** int(rng.integers(-30, 30))),
    lambda: Fraction(int(rng.integers(-(10**6), 10**6)), int(rng.integers(1, 10**6))),
    lambda: Fraction(1) + Fraction(1, 2**24) + Fraction(1, 2**60),
    lambda: (
      Decimal(str(rng.normal()))
      if rng.random() < 0.7
      else Decimal(str(rng.choice(["NaN", "-Infinity", "Infinity", "1e-400", "-0", "1e400"])))
    ),
    lambda: np.float16(rng.normal()),
    lambda: ml_dtypes.bfloat16(rng.normal()),
    lambda: np.longdouble(rng.normal()) / np.longdouble(3),
    lambda: np.int8(rng.integers(-128, 128)),
    lambda: np.uint64(2**64 - 1),
    lambda: np.int64(rng.integers(-(2**63), 2**63 - 1)),
    lambda: np.array(rng.normal()),
    lambda: np.array(int(rng.integers(-5, 5)), np.int32),
    lambda: bool(rng.random() < 0.5),
    lambda: np.bool_(True),
    lambda: complex(1, 1),
    lambda: np.complex64(2),
    lambda: None,
    lambda: "0.5",
  ]
  return choices[int(rng.integers(len(choices)))]()


def _platform(rng):
  """(kwargs, validity): 'ok', 'invalid' (status) or 'python' (TypeError/ValueError)."""
  kw, state = {}, "ok"
  r = rng.random()
  if r < 0.55:
    return kw, state
  if r < 0.8:
    kw["ub_size"] = int(rng.integers(UB_MIN // UB_ALIGN, UB_MAX // UB_ALIGN + 1)) * UB_ALIGN
    kw["core_num"] = int(rng.choice([1, 2, 3, 7, 48, 64, 4096]))
    return kw, state
  hostile = [
    ("ub_size", 2000),
    ("ub_size", 0),
    ("ub_size", 512),
    ("ub_size", UB_MIN - 32),
    ("ub_size", UB_MAX + 32),
    ("ub_size", 2**40),
    ("ub_size", 2**64 - 1),
    ("ub_size", UB_MIN + 16),
    ("core_num", 0),
    ("core_num", CORE_MAX + 1),
    ("core_num", 2**32 - 1),
    ("core_num", -1),
    ("ub_size", 2**64),
    ("core_num", 2**32),
    ("core_num", True),
    ("ub_size", 16384.0),
  ]
  name, value = hostile[int(rng.integers(len(hostile)))]
  kw[name] = value
  if (
    isinstance(value, (bool, float)) or value < 0 or value >= 2 ** (64 if name == "ub_size" else 32)
  ):
    return kw, "python"
  return kw, "invalid"


# ---------------------------------------------------------------------------------------------
# One case.


class _Case:
  def __init__(self, index):
    self.index = index
    self.rng = np.random.default_rng([SEED, index])

  def describe(self):
    return (
      f"fuzz case {self.index} (JAX_THRESHOLD_FUZZ_SEED={SEED} "
      f"JAX_THRESHOLD_FUZZ_CASE={self.index}): {self.summary}"
    )

  def build(self):
    rng = self.rng
    self.soc = str(rng.choice(list(SOC_DTYPES)))
    self.platform, self.platform_state = _platform(rng)
    g_shape, x_shape, out_shape, self.mode = _shape_pair(rng)
    dtype = _dtype(rng)
    dtypes = [dtype, dtype, dtype]
    if rng.random() < 0.05:
      dtypes[int(rng.integers(3))] = _dtype(rng)
    swapped = [False] * 3
    for i in range(3):
      if dtypes[i].itemsize > 1 and rng.random() < 0.04 and dtypes[i].kind in "fiuc":
        dtypes[i] = dtypes[i].newbyteorder("S")
        swapped[i] = True
    self.swapped = swapped
    shapes = [g_shape, x_shape, out_shape]
    huge = self.mode == "huge"
    self.odd_strides = [False] * 3

    # Lay the views out in one arena: [guard][tensor regions ...][guard].
    layouts = []
    for i, (shape, dt) in enumerate(zip(shapes, dtypes)):
      if huge:
        strides = [0] * len(shape)
      else:
        strides = _strides(shape, dt.itemsize, rng, allow_zero=(i < 2 or rng.random() < 0.1))
      misalign = int(rng.integers(1, dt.itemsize)) if dt.itemsize > 1 and rng.random() < 0.1 else 0
      odd = [d for d, n in enumerate(shape) if n > 1]
      if odd and dt.itemsize > 1 and not huge and rng.random() < 0.02:
        strides[odd[int(rng.integers(len(odd)))]] += 1  # not a whole number of elements
        self.odd_strides[i] = True
      layouts.append([shape, dt, strides, misalign])
    guard = 64
    cursor = guard
    firsts = []
    for shape, dt, strides, misalign in layouts:
      lo, hi = _extent(shape, strides, dt.itemsize)
      first = cursor - lo + misalign
      cursor = first + hi + int(rng.integers(0, 3)) * 8
      firsts.append(first)
    overlap = None
    if not huge and rng.random() < 0.25:  # out shares memory with an input
      src = int(rng.integers(2))
      if (
        rng.random() < 0.4 and layouts[src][0] == layouts[2][0] and layouts[src][1] == layouts[2][1]
      ):
        layouts[2][2] = list(layouts[src][2])
        self.odd_strides[2] = self.odd_strides[src]
        firsts[2] = firsts[src]  # the exact same view: in place
        overlap = f"out is {'grad_output x'.split()[src]} (in place)"
      else:
        shift = int(rng.integers(-3, 4)) * layouts[2][1].itemsize
        lo, _ = _extent(layouts[2][0], layouts[2][2], layouts[2][1].itemsize)
        firsts[2] = max(firsts[src] + shift, guard - lo)
        overlap = f"out overlaps {'grad_output x'.split()[src]} (shift {shift})"
    size = guard
    for (shape, dt, strides, _), first in zip(layouts, firsts):
      _, hi = _extent(shape, strides, dt.itemsize)
      size = max(size, first + hi)
    arena = rng.integers(0, 256, size=size + guard, dtype=np.uint8)
    self.arena = arena
    self.views = []
    for (shape, dt, strides, _), first in zip(layouts, firsts):
      try:
        view = np.ndarray(shape, dtype=dt, buffer=arena, offset=first, strides=strides)
      except ValueError:  # a huge view NumPy cannot describe (nbytes beyond intp): shrink it
        shape = tuple(max(1, d >> 8) for d in shape)
        view = np.ndarray(shape, dtype=dt, buffer=arena, offset=first, strides=strides)
      self.views.append(view)
    shapes = [v.shape for v in self.views]
    # Sensible values in the inputs (random bytes are mostly NaN-free noise otherwise).
    if not huge:
      for i in (0, 1):
        if not swapped[i] and self.views[i].size:
          vals = _values(self.views[i].dtype, self.views[i].shape, rng)
          self.views[i][...] = vals
    nulls = [rng.random() < 0.02 for _ in range(3)]
    self.args = [None if nulls[i] else self.views[i] for i in range(3)]
    self.threshold = _threshold(rng, None if huge or nulls[1] else self.views[1])
    x = self.views[1]
    if not huge and not swapped[1] and x.size and x.dtype.kind in "fiuV" and rng.random() < 0.5:
      # Plant the bit-neighbours of x values next to the threshold, where rounding decides.
      try:
        t = np.asarray(self.threshold).astype(np.float32 if x.dtype.kind in "fV" else np.int64)
        base = np.array([t, t]).astype(x.dtype)
        bits = base.view(f"u{x.dtype.itemsize}") + np.array([1, -1]).astype(f"u{x.dtype.itemsize}")
        picks = rng.integers(0, x.size, size=min(x.size, 4))
        x.flat[picks] = np.concatenate([bits.view(x.dtype), base])[: len(picks)]
      except (TypeError, ValueError, OverflowError):
        pass
    if not huge and rng.random() < 0.02 and self.args[2] is not None:
      self.args[2] = self.views[2].view()
      self.args[2].flags.writeable = False
      self.readonly = True
    else:
      self.readonly = False
    self.summary = (
      f"soc={self.soc} platform={self.platform} dtypes={[d.str for d in dtypes]} "
      f"shapes={shapes} strides={[v.strides for v in self.views]} "
      f"offsets={firsts} {overlap or ''} nulls={nulls} "
      f"threshold={self.threshold!r} ({type(self.threshold).__name__})"
    )

  def expectation(self):
    """'python' (TypeError/ValueError), 'status' (a nonzero status), 'ok', or 'either' (huge
    cases: phase one may plan them or refuse them as too large). Python-level checks come
    first (platform ints, tensors, then the threshold), as in aclnn.py; then docs/behaviour.md §2's order."""
    g, x, out = self.args
    if self.platform_state == "python" or self.readonly:
      return "python"
    if any(
      (s or o) and a is not None for s, o, a in zip(self.swapped, self.odd_strides, self.args)
    ):
      return "python"
    try:
      value = _exact(self.threshold)
    except Refused as r:
      if str(r) == "type":
        return "python"
      return "status"  # null (step 1) or complex (step 3)
    if any(a is None for a in self.args) or self.platform_state == "invalid":
      return "status"
    if self.platform.get("ub_size", 0) > SOC_UB_BYTES.get(self.soc, UB_MAX):
      return "status"
    zero = not isinstance(value, float) and value == 0
    allowed = (SOC_ZERO_DTYPES if zero else SOC_DTYPES)[self.soc]
    names = [a.dtype.name for a in self.args]
    if names[0] != names[1] or names[2] != names[1] or names[1] not in allowed:
      return "status"
    if g.ndim > MAX_RANK or x.ndim > MAX_RANK:
      return "status"
    try:
      shape = np.broadcast_shapes(g.shape, x.shape)
    except ValueError:
      return "status"
    if math.prod(d for d in shape if d) >= 2**63:
      return "status"
    if tuple(out.shape) != tuple(shape):
      return "status"
    if self.mode == "huge":
      return "either"
    self.value = value
    return "ok"

  def run(self, test):
    self.build()
    expect = self.expectation()
    g, x, out = self.args
    before = self.arena.copy()
    copies = [None if a is None or a.size > RUN_MAX_ELEMENTS else np.array(a) for a in (g, x)]
    try:
      status, ws, executor = aclnn.threshold_backward_get_workspace_size(
        g, x, self.threshold, out, soc=self.soc, **self.platform
      )
    except (TypeError, ValueError) as e:
      test.assertEqual(expect, "python", f"{self.describe()}\nunexpected {type(e).__name__}: {e}")
      test.assertTrue(np.array_equal(self.arena, before), self.describe())
      return "python"
    test.assertNotIn(
      expect, ("python",), f"{self.describe()}\nexpected TypeError/ValueError, got status {status}"
    )
    message = aclnn.recent_error_message() if status else ""
    if status != aclnn.ACLNN_SUCCESS:
      test.assertIn(
        expect, ("status", "either"), f"{self.describe()}\nrefused with {status}: {message}"
      )
      test.assertIn(
        status,
        (aclnn.ACLNN_ERR_PARAM_NULLPTR, aclnn.ACLNN_ERR_PARAM_INVALID),
        f"{self.describe()}\n{message}",
      )
      test.assertIsNone(executor)
      test.assertTrue(message, self.describe())
      test.assertTrue(np.array_equal(self.arena, before), self.describe())
      return "status"
    test.assertIn(expect, ("ok", "either"), f"{self.describe()}\naccepted (ws {ws})")
    n = math.prod(out.shape)
    # The workspace holds a buffer per planned copy (no wrap-around): n elements for out and for
    # an input of out's size, the input's own size for a broadcast one (which the kernel reads
    # through its broadcast copy-in, never at out's size).
    copied = [
      (math.prod(t.shape) if math.prod(t.shape) < n else n) if copy else 0
      for copy, t in zip(executor.copies, (g, x, out))
    ]
    test.assertGreaterEqual(ws, sum(copied) * out.dtype.itemsize, self.describe())
    if ws > WS_CAP or n > RUN_MAX_ELEMENTS or expect != "ok":
      return "planned"
    workspace = np.empty(ws, np.uint8) if ws else None
    status = aclnn.threshold_backward(workspace, ws, executor)
    test.assertEqual(
      status, aclnn.ACLNN_SUCCESS, f"{self.describe()}\nphase two: {aclnn.recent_error_message()}"
    )
    expected = oracle.threshold_backward(copies[0], copies[1], self.threshold)
    want = before.copy()
    if n:
      offsets = np.zeros(out.shape, np.int64) + (
        out.__array_interface__["data"][0] - self.arena.__array_interface__["data"][0]
      )
      for d, s in enumerate(out.strides):
        shape = [1] * out.ndim
        shape[d] = out.shape[d]
        offsets = offsets + (np.arange(out.shape[d], dtype=np.int64) * s).reshape(shape)
      offsets = offsets.reshape(-1)
      item = out.dtype.itemsize
      raw = np.ascontiguousarray(expected.astype(out.dtype)).reshape(-1).view(np.uint8)
      raw = raw.reshape(n, item)
      # Last write (C order) wins where out's elements share memory.
      unique, first_in_reversed = np.unique(offsets[::-1], return_index=True)
      last = n - 1 - first_in_reversed
      want[unique[:, None] + np.arange(item)] = raw[last]
    if not np.array_equal(self.arena, want):
      changed = np.flatnonzero(self.arena != want)
      test.fail(
        f"{self.describe()}\n{changed.size} arena bytes differ from the oracle / "
        f"untouched memory, first at byte {changed[0]} (kernel "
        f"{executor.kernel}, copies {executor.copies})"
      )
    return "ran"


class _Checks(unittest.TestCase):
  """The assertion methods, for the child process."""

  __test__ = False  # not a test of its own

  def runTest(self):
    pass


def run_cases(seconds, progress_path=None):
  """Runs cases until `seconds` have passed (or only ONLY_CASE); returns the outcome counts.
  Before each case its index is written to `progress_path`, so a crash can be located."""
  checks = _Checks()
  progress = os.open(progress_path, os.O_WRONLY | os.O_CREAT) if progress_path else None
  outcomes = {}
  deadline = time.monotonic() + seconds
  index = int(ONLY_CASE) if ONLY_CASE is not None else 0
  while True:
    if ONLY_CASE is None and time.monotonic() >= deadline:
      break
    if progress is not None:
      os.pwrite(progress, f"{index:<20d}".encode(), 0)
    with np.errstate(all="ignore"):
      outcome = _Case(index).run(checks)
    outcomes[outcome] = outcomes.get(outcome, 0) + 1
    if ONLY_CASE is not None:
      break
    index += 1
  return outcomes


def _child_main(progress_path):
  """Entry point of the child process: prints the outcomes, or the failure, as JSON."""
  import json
  import sys

  try:
    outcomes = run_cases(SECONDS, progress_path)
  except AssertionError as e:
    print(json.dumps({"failure": str(e)}))
    sys.exit(1)
  print(json.dumps({"outcomes": outcomes}))


@unittest.skipIf(aclnn is None, _SKIP if aclnn is None else "")
class FuzzTest(absltest.TestCase):
  def test_fuzz(self):
    """Runs the cases in a child process, so a crash (or a sanitizer report) is a failed test
    that names the case, not a dead pytest."""
    import json
    import subprocess
    import sys
    import tempfile

    if SECONDS <= 0 and ONLY_CASE is None:
      self.skipTest("JAX_THRESHOLD_FUZZ_SECONDS=0")
    tests_dir = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory() as tmp:
      progress = os.path.join(tmp, "case")
      code = (
        f"import sys; sys.path[:] = {[tests_dir] + sys.path!r}\n"
        f"import test_fuzz_aclnn; test_fuzz_aclnn._child_main({progress!r})"
      )
      result = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp, capture_output=True, text=True, timeout=SECONDS + 600
      )
      case = open(progress).read().strip() if os.path.exists(progress) else "?"
    lines = result.stdout.strip().splitlines()
    report = json.loads(lines[-1]) if lines and lines[-1].startswith("{") else {}
    if "failure" in report:
      self.fail(report["failure"])
    self.assertEqual(
      result.returncode,
      0,
      f"the fuzz process died (rc {result.returncode}) in case {case}: replay with "
      f"JAX_THRESHOLD_FUZZ_SEED={SEED} JAX_THRESHOLD_FUZZ_CASE={case}\n"
      f"{result.stderr[-6000:]}",
    )
    outcomes = report["outcomes"]
    print(f"\naclnn fuzz: {sum(outcomes.values())} cases in {SECONDS:g}s (seed {SEED}): {outcomes}")
    if ONLY_CASE is None and SECONDS >= 5:
      # Every kind of outcome occurs in a real run (else the generator has gone wrong).
      for outcome in ("python", "status", "ran"):
        self.assertGreater(outcomes.get(outcome, 0), 0, outcomes)


if __name__ == "__main__":
  absltest.main()
