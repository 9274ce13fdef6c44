"""Row-major layouts for the project's custom calls, refused otherwise where JAX can see them.

The handler reads every buffer row-major, and XLA FFI hands it no layout: a custom call that
declares other `operand_layouts` / `result_layouts` (via `jax.ffi.ffi_call(...,
input_layouts=...)`, or an edited `jax.export` module) would get its buffers in that physical
order and be read wrongly. The layouts are visible only in the StableHLO `custom_call` op, so
they are checked where JAX builds that op for the program it compiles:

- `jax.ffi.ffi_call` to one of the project's targets: after JAX's own lowering rule has built
  the op (`install`, wrapping the `ffi_call` primitive's rule);
- a `jax.export.Exported` being called (also after deserialization): its module is read
  before JAX inlines it (wrapping the exported-call rule).

Either raises `ValueError` at lowering time. The project's own lowering declares row-major.
Under SPMD partitioning the partitioner replaces the call by a per-device call that declares
row-major, so XLA lays the blocks out row-major for it. What is not checked: a module compiled
without JAX's lowering (StableHLO or HLO handed to XLA directly); there nothing in reach of the
project sees the layouts.
"""

from jax.extend.mlir import ir
from jax.interpreters import mlir

_CUSTOM_CALL = "stablehlo.custom_call"


def _rank(value_type) -> int | None:
  try:
    return ir.RankedTensorType(value_type).rank
  except (ValueError, TypeError):
    return None  # a token or tuple: the handler refuses those calls itself


def _layouts(op, name):
  if name not in op.attributes:
    return None  # XLA's default: row-major
  return [list(ir.DenseIntElementsAttr(a)) for a in ir.ArrayAttr(op.attributes[name])]


def check_custom_call(op, targets) -> None:
  """ValueError if `op` is a custom call to one of `targets` with a non-row-major layout."""
  if op.name != _CUSTOM_CALL:
    return
  target = ir.StringAttr(op.attributes["call_target_name"]).value
  if target not in targets:
    return
  for kind, attribute, values in (
    ("operand", "operand_layouts", op.operands),
    ("result", "result_layouts", op.results),
  ):
    layouts = _layouts(op, attribute)
    if layouts is None:
      continue
    for i, (layout, value) in enumerate(zip(layouts, values)):
      rank = _rank(value.type)
      if rank is not None and layout != list(range(rank - 1, -1, -1)):
        raise ValueError(
          f"jax_threshold: custom call {target} declares {kind} {i} with layout "
          f"(minor_to_major) {layout}; it reads and writes every buffer row-major "
          f"({list(range(rank - 1, -1, -1))}) and XLA FFI does not tell it otherwise"
        )


def check_module(module, targets) -> None:
  """check_custom_call for every op of an MLIR module (nested regions included)."""

  def walk(operation):
    for region in operation.regions:
      for block in region.blocks:
        for child in block.operations:
          check_custom_call(child.operation, targets)
          walk(child.operation)

  walk(module.operation)


def _checked_ffi_call_rule(rule, targets):
  def lowering(ctx, *operands, **params):
    results = rule(ctx, *operands, **params)
    if params.get("target_name") in targets:
      flat = [r for r in results for r in (r if isinstance(r, (list, tuple)) else [r])]
      if flat:
        check_custom_call(flat[0].owner.operation, targets)
      elif operands:  # no results: find the op among the operands' users
        for use in operands[0].uses:
          check_custom_call(use.owner.operation, targets)
    return results

  return lowering


def _checked_exported_rule(rule, targets):
  def lowering(ctx, *args, exported, **params):
    text = exported.mlir_module()
    if any(t in text for t in targets):
      with mlir.make_ir_context():
        check_module(ir.Module.parse(text), targets)
    return rule(ctx, *args, exported=exported, **params)

  return lowering


def install(targets) -> bool:
  """Wraps JAX's lowering rules of `jax.ffi.ffi_call` and of exported calls with the check.

  Returns False (nothing installed) where this JAX keeps those rules elsewhere.
  """
  try:
    from jax._src import ffi as _jax_ffi  # the rules have no public registry
    from jax._src.export import _export
    from jax._src.interpreters import mlir as _mlir

    entries = [
      (_jax_ffi.ffi_call_p, _checked_ffi_call_rule),
      (_export.call_exported_p, _checked_exported_rule),
    ]
    current = [(_mlir._lowerings[p], wrap) for p, wrap in entries]  # pylint: disable=protected-access
  except (ImportError, AttributeError, KeyError):
    return False
  targets = frozenset(targets)
  for (prim, _), (entry, wrap) in zip(entries, current):
    rule = getattr(entry, "rule", entry)
    if getattr(rule, "_jax_threshold_layout_check", False):
      continue
    checked = wrap(rule, targets)
    checked._jax_threshold_layout_check = True  # pylint: disable=protected-access
    mlir.register_lowering(prim, checked, inline=getattr(entry, "inline", True))
  return True
