"""The `threshold_backward` primitive and its transformation rules.

    out = threshold_backward_p.bind(grad_output, x, threshold, implementation=name, relu_grad=b)
    out[i] = grad_output[i] if x[i] > threshold[i] else 0      (a select, docs/behaviour.md §1)

Operands
  grad_output, x: one supported dtype (`_dtypes`); they broadcast against each other with NumPy
    rules. grad_output is the linear operand.
  threshold: an operand, not a param, so jit does not recompile for a new value and vmap can
    batch it; `_threshold.operand` builds it from the user's value (its dtypes:
    `_dtypes.threshold_operand_dtypes`). Its shape is () from the public API; the batching rule
    gives it the output's rank with only leading (batch) dims other than 1 (`_shapes`).

Params
  implementation: "auto", "reference" or "ffi", resolved per platform when lowering
    (`lowering.py`).
  relu_grad: whether the threshold is known at trace time to be exactly 0 (a flag, not the value:
    no recompile per threshold). The custom call then runs CANN's ReluGrad kernel, with the same
    bits; the reference lowering ignores it. Optional (False).

Output: the broadcast shape of the operands (`_shapes.output_shape`), x's dtype and, on a mesh,
the sharding JAX's elementwise ops would give it. The rules below: impl through dispatch,
abstract eval, batching (one bind for the whole batch), JVP and jet (linear in grad_output),
transpose (w.r.t. grad_output, summed over the dims it was broadcast along).
"""

import functools

import jax
from jax import lax
import jax.extend.core
from jax.experimental import jet
from jax.interpreters import ad
from jax.interpreters import batching
from jax.interpreters import xla
from jax.sharding import AxisType
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec
import numpy as np

from jax_threshold import _dtypes
from jax_threshold import _shapes

# The values of the `implementation` param; `lowering.py` resolves them per platform.
IMPLEMENTATIONS = ("auto", "reference", "ffi")


def check_implementation(name: object, where: str = "threshold_backward") -> str:
  """`name` if it is an implementation name, else ValueError (prefixed by `where`)."""
  if not isinstance(name, str) or name not in IMPLEMENTATIONS:
    hint = ""
    if isinstance(name, str) and name.lower() in IMPLEMENTATIONS:
      hint = f"; did you mean {name.lower()!r}?"
    raise ValueError(
      f"{where}: unknown implementation {name!r}; expected one of "
      f"{IMPLEMENTATIONS} (or None for the default){hint}"
    )
  return name


def _varying_axes(value) -> frozenset:
  mat = getattr(jax.typeof(value), "mat", None)
  return frozenset(mat.varying) if mat is not None else frozenset()


def match_varying_axes(*operands):
  """Makes the operands vary over the same shard_map axes (their union), as binding needs.

  Inside `shard_map`, an unsharded threshold is invariant while a sharded x varies; the
  primitive (like an XLA FFI call) takes operands with one common set, so the invariant ones
  are cast to varying first. Outside shard_map this returns the operands unchanged.
  """
  axes = [_varying_axes(o) for o in operands]
  common = frozenset().union(*axes)
  if not common:
    return operands
  return tuple(
    o if a == common else lax.pcast(o, tuple(sorted(common - a)), to="varying")
    for o, a in zip(operands, axes)
  )


def explicit_output_sharding(operands):
  """The sharding JAX's elementwise ops give a broadcast result, where the type carries one.

  On a mesh with Explicit axes: the sharding of a broadcasting op (`lax.add`) of the operands,
  rank-promoted, by `jax.eval_shape`: JAX's own rule, so a disagreement is its own
  ShardingTypeError. None on Auto/Manual meshes and without a mesh (XLA's partitioner decides).
  """
  shardings = [getattr(o, "sharding", None) for o in operands]
  if any(s is None for s in shardings):
    return None
  meshes = [s.mesh for s in shardings if not s.mesh.empty]
  if not any(_has_explicit_axes(m) for m in meshes + [jax.sharding.get_abstract_mesh()]):
    return None
  rank = max(len(o.shape) for o in operands)
  padded = [
    jax.ShapeDtypeStruct(
      (1,) * (rank - len(o.shape)) + tuple(o.shape),
      np.float32,
      sharding=o.sharding.update(
        spec=PartitionSpec(*(None,) * (rank - len(o.shape)), *o.sharding.spec)
      ),
    )
    for o in operands
  ]
  return jax.eval_shape(lambda *a: functools.reduce(lax.add, a), *padded).sharding


def _has_explicit_axes(mesh) -> bool:
  return not mesh.empty and any(t == AxisType.Explicit for t in mesh.axis_types)


def _output_aval(shape, dtype, operands):
  """The output aval: the broadcast sharding on a mesh with Explicit axes; inside shard_map
  it varies over the operands' (common) manual axes."""
  mats = [getattr(o, "mat", None) for o in operands]
  if any(m is None for m in mats) or not any(m.varying for m in mats):
    return jax.core.ShapedArray(shape, dtype, sharding=explicit_output_sharding(operands))
  if len({frozenset(m.varying) for m in mats}) > 1:
    raise ValueError(
      "threshold_backward: grad_output, x and threshold must vary over the same "
      "shard_map axes; got "
      + ", ".join(sorted(str(set(m.varying)) for m in mats))
      + " (threshold_backward() brings them to a common set before binding)"
    )
  sharding = NamedSharding(jax.sharding.get_abstract_mesh(), PartitionSpec())
  return jax.core.ShapedArray(shape, dtype, sharding=sharding, manual_axis_type=mats[0])


threshold_backward_p = jax.extend.core.Primitive("threshold_backward")
threshold_backward_p.def_impl(functools.partial(xla.apply_primitive, threshold_backward_p))


def _threshold_backward_abstract_eval(
  grad_output, x, threshold, *, implementation, relu_grad=False
):
  del relu_grad  # a kernel choice: the result's type does not depend on it
  check_implementation(implementation)
  dtype = _dtypes.check_same_dtype(grad_output.dtype, x.dtype)
  allowed = _dtypes.threshold_operand_dtypes(dtype)
  if np.dtype(threshold.dtype) not in allowed:
    raise TypeError(
      f"threshold_backward: the threshold operand for x of dtype {dtype.name} "
      f"must have dtype {' or '.join(d.name for d in allowed)}; got "
      f"{np.dtype(threshold.dtype).name} (use _threshold.operand)"
    )
  shape = _shapes.output_shape(grad_output.shape, x.shape, threshold.shape)
  return _output_aval(shape, dtype, (grad_output, x, threshold))


threshold_backward_p.def_abstract_eval(_threshold_backward_abstract_eval)


def _move_batch_dim_to_front(operand, bdim, out_rank):
  """Batch dim first, then 1s so the rest right-aligns with the unbatched output."""
  operand = batching.bdim_at_front(operand, bdim, operand.shape[bdim])
  size, rest = operand.shape[0], operand.shape[1:]
  return lax.reshape(operand, (size,) + _shapes.right_align(rest, out_rank))


def _threshold_backward_batch_rule(batched_args, batch_dims, **params):
  out_rank = max(a.ndim - (d is not None) for a, d in zip(batched_args, batch_dims))
  # A batched operand gets its batch dim in front; an unbatched one right-aligns by broadcasting.
  # The threshold keeps its convention: 0-d, or the output's rank with only leading dims not 1.
  grad_output, x, threshold = (
    a if d is None else _move_batch_dim_to_front(a, d, out_rank)
    for a, d in zip(batched_args, batch_dims)
  )
  if batch_dims[2] is None and threshold.ndim:
    threshold = lax.expand_dims(threshold, (0,))
  return threshold_backward_p.bind(grad_output, x, threshold, **params), 0


batching.primitive_batchers[threshold_backward_p] = _threshold_backward_batch_rule


def _threshold_backward_jvp(grad_output_dot, grad_output, x, threshold, **params):
  # Linear in grad_output; x and the threshold only choose the mask: their tangents give nothing.
  del grad_output
  return threshold_backward_p.bind(grad_output_dot, x, threshold, **params)


ad.defjvp(threshold_backward_p, _threshold_backward_jvp, None, None)


def _unbroadcast(aval, ct):
  """Sums `ct` over the dims along which an operand of `aval`'s shape was broadcast."""
  shape = tuple(aval.shape)
  # On a mesh with Explicit axes the cotangent must also carry the operand's sharding.
  sharding = aval.sharding if _has_explicit_axes(aval.sharding.mesh) else None
  if tuple(ct.shape) == shape and (sharding is None or jax.typeof(ct).sharding == sharding):
    return ct
  dims = _shapes.broadcast_dims(shape, ct.shape)
  summed = lax.reduce_sum(ct, dims) if dims else ct
  return lax.reshape(summed, shape, out_sharding=sharding)


def _threshold_backward_transpose(ct, grad_output, x, threshold, **params):
  if ad.is_undefined_primal(x) or ad.is_undefined_primal(threshold):
    raise ValueError(
      "threshold_backward is linear in grad_output only; it cannot be "
      "transposed with respect to x or threshold"
    )
  assert ad.is_undefined_primal(grad_output)
  if type(ct) is ad.Zero:
    return ad.Zero(grad_output.aval), None, None
  # The mask is elementwise and symmetric: the transpose applies it again.
  ct_grad_output = threshold_backward_p.bind(ct, x, threshold, **params)
  return _unbroadcast(grad_output.aval, ct_grad_output), None, None


ad.primitive_transposes[threshold_backward_p] = _threshold_backward_transpose


def _threshold_backward_jet(primals_in, series_in, **params):
  # Linear in grad_output: each Taylor coefficient goes through the same mask.
  grad_output, x, threshold = primals_in
  bind = lambda g: threshold_backward_p.bind(g, x, threshold, **params)
  return bind(grad_output), [bind(term) for term in series_in[0]]


jet.jet_rules[threshold_backward_p] = _threshold_backward_jet
