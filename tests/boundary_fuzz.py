"""A fuzzer at the custom-call boundary (run by test_fuzz_boundary.py in a child process).

    python tests/boundary_fuzz.py SECONDS SEED

with XLA_FLAGS=--xla_force_host_platform_device_count=4. Hypothesis generates hand-written
`jax.ffi.ffi_call`s to the project's target: random result counts (0-2), operand counts, dtypes,
shapes (broadcasting or not), threshold shapes and dtypes, the relu_grad attribute (false, true,
absent as in the legacy targets' calls, or not a bool), shardings over 1, 2 or 4 CPU devices and,
where the call is partitioned (2 or 4 devices), layouts; jitted on each. (On one device a layout
other than row-major is not supported: XLA FFI hands the handler no layout.) Every call must either raise (a clean
error) or return the oracle's bits (tests/oracle.py, element by element); an abort kills the
child, which the parent reports with the last case printed. Batches of examples with seeds
SEED, SEED+1, ... run until SECONDS have passed (hypothesis has no wall-clock budget of its
own); a failing example is shrunk by hypothesis and printed. Prints "cases N errors M" at the end.
"""

import itertools
import sys
import time

from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import seed as hypothesis_seed
from hypothesis import settings
from hypothesis import strategies as st
import jax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P
import numpy as np

import jax_threshold as jt
from jax_threshold import _native
import dtype_lists
import oracle

TARGET = jt.ffi_targets()[0]
# The contract's dtypes JAX holds without x64, and the bool and integer ones the native table
# names and refuses.
DTYPES = list(dtype_lists.CANONICAL) + [
  np.dtype(name)
  for name in _native.DTYPES
  if name not in _native.KERNEL_DTYPES
  and np.dtype(name).kind in "biu"
  and np.dtype(name).itemsize < 8
]
BATCH = 20  # examples per hypothesis run
_counts = {"cases": 0, "errors": 0}


@st.composite
def shapes_for(draw, out_shape):
  """A shape that broadcasts to out_shape (mostly), or any small shape."""
  if draw(st.integers(0, 9)) == 0:
    return tuple(draw(st.lists(st.sampled_from([1, 2, 3, 4, 8]), max_size=3)))
  rank = draw(st.integers(0, len(out_shape)))
  tail = out_shape[len(out_shape) - rank :]
  return tuple(1 if draw(st.booleans()) and draw(st.booleans()) else d for d in tail)


@st.composite
def calls(draw):
  out_shape = tuple(draw(st.lists(st.sampled_from([1, 2, 4, 8]), max_size=3)))
  dtype = np.dtype(draw(st.sampled_from(DTYPES)))
  g_shape, x_shape = draw(shapes_for(out_shape)), draw(shapes_for(out_shape))
  g_dtype = dtype if draw(st.integers(0, 7)) else np.dtype(draw(st.sampled_from(DTYPES)))
  result_dtype = dtype if draw(st.integers(0, 7)) else np.dtype(draw(st.sampled_from(DTYPES)))
  operands = [(g_shape, g_dtype), (x_shape, dtype)]
  t_dtype = np.dtype(draw(st.sampled_from([np.float32, np.float64, np.int32, np.int8, dtype.type])))
  if draw(st.integers(0, 2)):
    t_shape = ()
  else:  # batched: the output's rank, leading dims of the output, or anything
    t_shape = tuple(
      d if i < draw(st.integers(0, len(out_shape))) else 1 for i, d in enumerate(out_shape)
    )
    if draw(st.integers(0, 4)) == 0:
      t_shape = draw(shapes_for(out_shape))
  operands.append((t_shape, t_dtype))
  if draw(st.integers(0, 9)) == 0:
    operands = (
      operands[: draw(st.integers(0, len(operands) - 1))]
      if draw(st.booleans())
      else operands + [operands[-1]]
    )
  results = 1 if draw(st.integers(0, 7)) else draw(st.sampled_from([0, 2]))
  devices = draw(st.sampled_from([1, 2, 4]))
  layouts = None
  if devices > 1 and draw(st.integers(0, 5)) == 0:
    layouts = [tuple(draw(st.permutations(range(len(s))))) for s, _ in operands]
  out_layout = None
  if devices > 1 and draw(st.integers(0, 7)) == 0:
    out_layout = tuple(draw(st.permutations(range(len(out_shape)))))
  sharded_dim = draw(st.integers(-1, len(out_shape) - 1))
  relu_grad = draw(st.sampled_from([False, False, True, None, 1]))
  return dict(
    target=TARGET,
    out_shape=out_shape,
    result_dtype=result_dtype,
    operands=operands,
    attrs={} if relu_grad is None else {"relu_grad": relu_grad},
    results=results,
    layouts=layouts,
    out_layout=out_layout,
    devices=devices,
    sharded_dim=sharded_dim,
    value_seed=draw(st.integers(0, 2**31 - 1)),
  )


def _values(shape, dtype, rng):
  dtype = np.dtype(dtype)
  if dtype == np.bool_:
    return np.asarray(rng.integers(0, 2, shape)).astype(dtype)
  if np.issubdtype(dtype, np.integer):
    info = np.iinfo(dtype)
    return np.asarray(rng.integers(max(info.min, -300), min(info.max, 300) + 1, shape)).astype(
      dtype
    )
  v = np.asarray(rng.standard_normal(shape) * 2)
  v[np.asarray(rng.random(shape)) < 0.1] = np.nan
  return v.astype(dtype)


def _expected(case, args):
  """The oracle's result, or None when the call is not one the oracle defines."""
  g, x = np.asarray(args[0]), np.asarray(args[1])
  if case["results"] != 1 or g.dtype != x.dtype or case["result_dtype"] != x.dtype:
    return None
  relu_grad = case["attrs"].get("relu_grad", len(args) == 2)  # absent: the legacy calls
  if len(args) not in (2, 3) or not isinstance(relu_grad, bool) or len(args) < 3 - relu_grad:
    return None
  thresholds = np.zeros((), np.float32) if relu_grad else np.asarray(args[2])  # ReluGrad's 0
  try:
    shape = np.broadcast_shapes(g.shape, x.shape, thresholds.shape)
  except ValueError:
    return None
  if shape != case["out_shape"]:
    return None
  g, x, t = (np.broadcast_to(a, shape) for a in (g, x, thresholds))
  out = np.empty(shape, g.dtype)
  for index in np.ndindex(*shape):
    out[index] = oracle.threshold_backward(g[index], x[index], t[index].item())
  return out


def run_case(case):
  _counts["cases"] += 1
  rng = np.random.default_rng(case["value_seed"])
  args = [_values(s, d, rng) for s, d in case["operands"]]
  result = jax.ShapeDtypeStruct(case["out_shape"], case["result_dtype"])
  results = (result,) * case["results"] if case["results"] != 1 else result
  devices = case["devices"]
  dim = case["sharded_dim"]
  out_shape = case["out_shape"]
  mesh = jax.make_mesh((devices,), ("d",), axis_types=(jax.sharding.AxisType.Auto,))
  shard_out = devices > 1 and dim >= 0 and out_shape[dim] % devices == 0

  def f(*a):
    call = jax.ffi.ffi_call(
      case["target"],
      results,
      has_side_effect=case["results"] == 0,
      input_layouts=case["layouts"],
      output_layouts=case["out_layout"],
    )
    out = jax.tree.leaves(call(*a, **case["attrs"]))
    if shard_out and out:
      spec = P(*[("d" if i == dim else None) for i in range(len(out_shape))])
      out[0] = jax.lax.with_sharding_constraint(out[0], NamedSharding(mesh, spec))
    return out

  placed = []
  for a in args:  # operands sharded along their own dim of the output's `dim`, where it divides
    lead = len(out_shape) - a.ndim
    i = dim - lead
    spec = P()
    if devices > 1 and 0 <= i < a.ndim and a.shape[i] % devices == 0 and a.shape[i] > 1:
      spec = P(*[("d" if j == i else None) for j in range(a.ndim)])
    placed.append(jax.device_put(a, NamedSharding(mesh, spec)))
  print("case", case, flush=True)
  try:
    out = jax.block_until_ready(jax.jit(f)(*placed))
  except Exception:  # pylint: disable=broad-except  (a clean error is an answer)
    _counts["errors"] += 1
    return
  want = _expected(case, args)
  assert want is not None, f"a result for a call the oracle does not define: {out}"
  got = np.asarray(out[0])
  assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
  np.testing.assert_array_equal(oracle.bits(got), oracle.bits(want))


def main(seconds, base_seed):
  deadline = time.monotonic() + seconds
  for batch in itertools.count():
    if time.monotonic() >= deadline:
      break

    @hypothesis_seed(base_seed + batch)
    @settings(
      max_examples=BATCH,
      deadline=None,
      database=None,
      derandomize=False,
      suppress_health_check=list(HealthCheck),
    )
    @given(calls())
    def fuzz(case):
      run_case(case)

    fuzz()
  print(f"cases {_counts['cases']} errors {_counts['errors']}", flush=True)


if __name__ == "__main__":
  main(float(sys.argv[1]), int(sys.argv[2]))
