"""How XLA partitions the threshold_backward custom call: as the elementwise op it is, and the
other registrations that reach into JAX's internals. Only `ffi.register()` imports this module;
if the internals move, "ffi" is unavailable with the reason and nothing else changes.

Without help XLA treats a custom call as opaque: on a mesh it all-gathers the operands, runs the
call on the whole array on every device and slices the result. Instead:

- Propagation. Shardy reads the `sdy.sharding_rule` the lowering attaches (`ffi.sharding_rule`).
  GSPMD (`jax_use_shardy_partitioner=False`) asks the partitioner registered here
  (`_infer_from_operands`, `_propagate_user`).
- Partitioning. Under both, XLA's SPMD partitioner calls `partition`, registered for the
  custom-call target names: it keeps the result's sharding, gives each operand that sharding on
  the dims it shares with the output (replicated along its broadcast dims) and returns the
  per-device program: the same custom call on the local blocks.
- Validation. Every callback checks the call first (`check_call`): one array result, the
  target's operand count, the dtypes, operands that broadcast to the result as `_shapes` says,
  row-major layouts. `partition` raises `UnsupportedCallError` for any other call (XLA reports
  a compile error); the GSPMD propagation callbacks return None instead, since XLA aborts on an
  exception from them. Nothing calls `dimensions()` on a tuple shape, which CHECK-fails in XLA.

Keyed by target name, the partitioner also partitions a `jax.export`ed module in any process
that imports jax_threshold (which it must anyway, to run the targets).
"""

import functools
import math

from jax._src import xla_bridge  # PJRT plugin callbacks: no public API
from jax._src.lib import xla_client  # the custom-call partitioner, HloSharding: no public API
from jax.extend.mlir import ir
from jax.extend.mlir.dialects import func as func_dialect
from jax.extend.mlir.dialects import stablehlo
from jax.interpreters import mlir
import numpy as np

from jax_threshold import _dtypes
from jax_threshold import _shapes

# The private uses, each waiting for a public API; read at import, so that a JAX that moved them
# fails here (and "ffi" is unavailable) instead of halfway through a registration.
# 1. A custom-call partitioner keyed by target name, and HloSharding to speak to it (waits for
#    `jax.ffi` to partition a target elementwise, as register_ffi_target_as_batch_partitionable
#    does for batch dims only).
_register_custom_call_partitioner = xla_client.register_custom_call_partitioner
_HloSharding = xla_client.HloSharding
_REPLICATED = xla_client.OpSharding.Type.REPLICATED
# 2. Registering it with each PJRT plugin once JAX discovers it (waits for a public hook, as
#    jax.ffi.register_ffi_target_as_batch_partitionable uses this one internally).
_register_plugin_callbacks = xla_bridge.register_plugin_callbacks
# 3. XLA's CPU registration of FFI types (waits for jax.ffi.register_ffi_type to reach XLA
#    before the targets that use the type, when both wait for the CPU backend).
_register_cpu_type = xla_client._xla.register_custom_type  # pylint: disable=protected-access

_TYPED_FFI_API_VERSION = 4


class UnsupportedCallError(ValueError):
  """A custom call to one of the project's targets that its lowering never emits.

  Raised by the partitioner's callbacks before they look at a shape: XLA turns it into a
  compile error instead of running the call on blocks that do not match.
  """


def _is_row_major(shape) -> bool:
  """True when `shape` carries no layout or the row-major one (minor_to_major = rank-1 .. 0)."""
  try:
    layout = shape.layout()
  except Exception:  # pylint: disable=broad-except  (a shape without a layout)
    return True
  if layout is None:
    return True
  minor_to_major = tuple(layout.minor_to_major())
  return not minor_to_major or minor_to_major == tuple(range(shape.rank() - 1, -1, -1))


def check_call(target: str, arg_shapes, result_shape) -> tuple[tuple[int, ...], ...]:
  """The operand shapes of a call the handler accepts, or UnsupportedCallError saying why.

  What the project's lowering emits (docs/behaviour.md, "The custom-call boundary"): one array
  result; grad_output, x and a threshold as arrays (no threshold: the version-1 ReluGrad targets'
  call); grad_output and x of one supported dtype, the result of x's dtype, the threshold of a
  dtype `_dtypes` allows for it; the result's shape the broadcast shape of the operands under
  `_shapes.output_shape`; row-major layouts where XLA shows them. Nothing here calls
  `dimensions()` on a shape that is not an array (XLA CHECK-fails on a tuple).
  """
  where = f"jax_threshold: custom call {target}"
  if result_shape is None or not result_shape.is_array():
    got = "nothing" if result_shape is None else result_shape
    raise UnsupportedCallError(f"{where} must have one array result; got {got}")
  arg_shapes = list(arg_shapes)
  if len(arg_shapes) not in (2, 3):
    raise UnsupportedCallError(
      f"{where} takes (grad_output, x, threshold) operands; got {len(arg_shapes)}"
    )
  for i, s in enumerate(arg_shapes):
    if not s.is_array():
      raise UnsupportedCallError(f"{where}: operand {i} must be an array; got {s}")
  names = ("grad_output", "x", "threshold")
  for name, s in list(zip(names, arg_shapes)) + [("the result", result_shape)]:
    if not _is_row_major(s):
      raise UnsupportedCallError(
        f"{where}: {name} {s} has a layout that is not row-major; "
        "the handler reads every buffer row-major"
      )
    if s.is_dynamic():
      raise UnsupportedCallError(f"{where}: {name} {s} has a dynamic dimension")
  dtypes = [np.dtype(s.numpy_dtype()) for s in arg_shapes]
  try:
    x_dtype = _dtypes.check_same_dtype(dtypes[0], dtypes[1])
  except TypeError as e:
    raise UnsupportedCallError(f"{where}: {e}") from None
  result_dtype = np.dtype(result_shape.numpy_dtype())
  if result_dtype != x_dtype:
    raise UnsupportedCallError(
      f"{where}: the result has dtype {result_dtype.name}, not x's {x_dtype.name}"
    )
  shapes = tuple(tuple(int(d) for d in s.dimensions()) for s in arg_shapes)
  threshold_shape = ()
  if len(shapes) == 3:
    allowed = _dtypes.threshold_operand_dtypes(x_dtype)
    if dtypes[2] not in allowed:
      raise UnsupportedCallError(
        f"{where}: the threshold for x of dtype {x_dtype.name} must have dtype "
        f"{' or '.join(d.name for d in allowed)}; got {dtypes[2].name}"
      )
    threshold_shape = shapes[2]
  out_shape = tuple(int(d) for d in result_shape.dimensions())
  try:
    want = _shapes.output_shape(shapes[0], shapes[1], threshold_shape)
  except ValueError as e:
    raise UnsupportedCallError(f"{where}: {e}") from None
  if tuple(want) != out_shape:
    raise UnsupportedCallError(
      f"{where}: the result's shape {list(out_shape)} is not the broadcast shape "
      f"{list(want)} of the operands {', '.join(str(list(s)) for s in shapes)}"
    )
  return shapes


def _device_grid(sharding):
  """(device array of the tile assignment, its subgroup types) of a tiled HloSharding."""
  dims = list(sharding.tile_assignment_dimensions())
  grid = np.asarray(sharding.tile_assignment_devices(), np.int64).reshape(dims)
  if sharding.replicate_on_last_tile_dim():
    return grid, [_REPLICATED]
  return grid, list(sharding.subgroup_types())


def operand_sharding(result_sharding, operand_shape, out_shape):
  """The sharding an operand needs so that each device holds the block its output tile reads.

  The result's tiling on the dims the operand shares with the output; its devices along
  the operand's broadcast dims become replicas (the operand is read whole there).
  """
  if result_sharding.is_replicated() or result_sharding.is_manual() or result_sharding.is_maximal():
    return result_sharding
  grid, subgroup_types = _device_grid(result_sharding)
  rank = len(out_shape)
  stretched = _shapes.broadcast_dims(operand_shape, out_shape)
  kept = [i for i in range(rank) if i not in stretched]
  folded = list(stretched)
  subgroups = list(range(rank, grid.ndim))
  grid = grid.transpose(kept + folded + subgroups)
  # The devices along the operand's missing leading dims and broadcast dims become one
  # replica dim; its broadcast (size-1) dims keep a tile of 1.
  lead = rank - len(operand_shape)
  operand_tiles = []
  kept_iter = iter(grid.shape[: len(kept)])
  for i in range(lead, rank):
    operand_tiles.append(1 if i in stretched else next(kept_iter))
  replicas = math.prod(grid.shape[len(kept) : len(kept) + len(folded)])
  grid = grid.reshape(operand_tiles + [replicas] + list(grid.shape[len(kept) + len(folded) :]))
  types = [_REPLICATED] + subgroup_types
  return _HloSharding.subgroup_with_device_ordering(grid, types)


def _output_grid(sharding, operand_shape, out_shape):
  """An operand's device grid on the output's dims (size-1 tiles for its missing leading
  dims), or None when it says nothing about the output (replicated, manual, or a sharded
  dim the operand is broadcast along)."""
  if sharding is None or sharding.is_replicated() or sharding.is_manual() or sharding.is_maximal():
    return None
  grid, subgroup_types = _device_grid(sharding)
  if any(t != _REPLICATED for t in subgroup_types):
    return None
  lead = len(out_shape) - len(operand_shape)
  stretched = _shapes.broadcast_dims(operand_shape, out_shape)
  if any(grid.shape[i - lead] != 1 for i in stretched if i >= lead):
    return None
  return grid.reshape((1,) * lead + grid.shape)


def _infer_from_operands(arg_shapes, arg_shardings, result_shape, backend_config, *, target):
  """GSPMD forward propagation: each output dim tiled as the first operand that tiles it.

  Operands may tile different dims (a vmapped threshold shards the batch dim, x a data
  dim): every device's tile index is read per dim from the operand owning that dim, and
  devices with the same indices become replicas. None when that gives no valid tiling.
  A call the handler would refuse gets None here (XLA aborts on an exception from this
  callback); `partition` refuses it.
  """
  try:
    return _infer_checked(target, arg_shapes, arg_shardings, result_shape, backend_config)
  except Exception:  # pylint: disable=broad-except  (never let XLA see an exception here)
    return None


def _infer_checked(target, arg_shapes, arg_shardings, result_shape, backend_config):
  del backend_config
  shapes = check_call(target, arg_shapes, result_shape)
  out_shape = tuple(result_shape.dimensions())
  rank = len(out_shape)
  grids = [
    g
    for g in (_output_grid(sh, s, out_shape) for s, sh in zip(shapes, arg_shardings))
    if g is not None
  ]
  owner = {}
  for grid in grids:
    for dim in range(rank):
      if grid.shape[dim] > 1 and dim not in owner:
        owner[dim] = grid
  if not owner:
    return None
  coords = {}
  for dim, grid in owner.items():
    for index in np.ndindex(*grid.shape):
      coords.setdefault(int(grid[index]), [0] * rank)[dim] = index[dim]
  groups = {}
  for device in sorted(coords):
    groups.setdefault(tuple(coords[device]), []).append(device)
  tiles = [owner[d].shape[d] if d in owner else 1 for d in range(rank)]
  replicas = {len(g) for g in groups.values()}
  if len(groups) != math.prod(tiles) or len(replicas) != 1:
    return None
  merged = np.empty(tiles + [replicas.pop()], np.int64)
  for index, devices in groups.items():
    merged[index] = devices
  return _HloSharding.subgroup_with_device_ordering(merged, [_REPLICATED])


def _propagate_user(user_sharding, shape, backend_config):
  """GSPMD backward propagation: the output takes the sharding its user wants.

  Shape-free (XLA aborts on an exception from this callback): a call with another result than
  one array is refused by `partition`.
  """
  del shape, backend_config
  return user_sharding


def _ir_type(shape):
  return ir.RankedTensorType.get(
    list(shape.dimensions()), mlir.dtype_to_ir_type(np.dtype(shape.numpy_dtype()))
  )


def _per_device_module(target, backend_config: bytes, arg_shapes, result_shape) -> bytes:
  """A module whose main runs `target` on one device's blocks (the same attributes)."""
  with mlir.make_ir_context(), ir.Location.unknown():
    module = ir.Module.create()
    in_types = [_ir_type(s) for s in arg_shapes]
    out_type = _ir_type(result_shape)
    with ir.InsertionPoint(module.body):
      main = func_dialect.FuncOp("main", ir.FunctionType.get(in_types, [out_type]))
      main.attributes["sym_visibility"] = ir.StringAttr.get("public")
      block = main.add_entry_block()
      with ir.InsertionPoint(block):
        text = backend_config.decode() if backend_config else "{}"
        attributes = ir.Attribute.parse(text or "{}")
        call = stablehlo.CustomCallOp(
          [out_type],
          list(block.arguments),
          call_target_name=ir.StringAttr.get(target),
          has_side_effect=ir.BoolAttr.get(False),
          backend_config=attributes,
          api_version=ir.IntegerAttr.get(ir.IntegerType.get_signless(32), _TYPED_FFI_API_VERSION),
          operand_layouts=ir.ArrayAttr.get([_row_major(s) for s in arg_shapes]),
          result_layouts=ir.ArrayAttr.get([_row_major(result_shape)]),
        )
        func_dialect.ReturnOp(call.results)
    return mlir.module_to_bytecode(module)


def _row_major(shape):
  rank = len(shape.dimensions())
  return ir.DenseIntElementsAttr.get(
    np.arange(rank - 1, -1, -1, dtype=np.int64), type=ir.IndexType.get()
  )


def _make_partition(target):
  def partition(arg_shapes, arg_shardings, result_shape, result_sharding, backend_config):
    del arg_shardings  # XLA reshards each operand to what is returned here
    shapes = check_call(target, arg_shapes, result_shape)  # before any dimensions() call
    out_shape = tuple(result_shape.dimensions())
    if result_sharding is None:
      result_sharding = _HloSharding.replicate()
    if result_sharding.tuple_elements():
      raise UnsupportedCallError(
        f"jax_threshold: custom call {target} has a tuple sharding for its one array result"
      )
    shardings = [operand_sharding(result_sharding, s, out_shape) for s in shapes]
    local_args = [sh.tile(s) for sh, s in zip(shardings, arg_shapes)]
    local_result = result_sharding.tile(result_shape)
    module = _per_device_module(target, backend_config, local_args, local_result)
    return module, shardings, result_sharding

  return partition


def register_partitioner(targets) -> None:
  """Registers the elementwise partitioner with XLA for each custom-call target name.

  With the in-process XLA (CPU) at once, and with each PJRT C-API plugin (e.g. an Ascend
  plugin) once JAX discovers it: a plugin compiles with its own partitioner registry.
  """
  for target in targets:
    register = functools.partial(
      _register_custom_call_partitioner,
      target,
      _propagate_user,
      _make_partition(target),
      functools.partial(_infer_from_operands, target=target),
      can_side_effecting_have_replicated_sharding=True,
    )
    register()
    _register_plugin_callbacks(register)


def register_types_now() -> None:
  """Makes jax.ffi.register_ffi_type reach XLA at once on CPU.

  XLA refuses a handler whose state type it does not know yet. Registrations made before the CPU
  backend exists wait in jaxlib's xla_client, and its CPU client flushes the waiting targets
  before the waiting types; installing the type handler that client installs (the same
  function: a no-op once installed) registers the types first.
  """
  xla_client.register_custom_type_handler("cpu", _register_cpu_type)
