"""Per-platform lowering of threshold_backward: dispatch between implementations.

The reference (jnp) lowering is registered for every platform. Other
implementations plug in with `register_lowering_implementation`, e.g. the FFI
module does, once its native targets are registered with XLA:

    register_lowering_implementation("ffi", ffi_lowering, platform="cpu",
                                     ffi_targets=("jax_threshold_threshold_backward_v1",),
                                     use_for_auto=True)

where `ffi_lowering(ctx, grad_output, x, threshold, *, implementation)` is an
MLIR lowering rule. The primitive's `implementation` param is resolved here, at
lowering time: "auto" takes the platform's `use_for_auto` implementation, else
the reference; "ffi" on a platform without an ffi lowering is an error.
"""

from typing import Any, Callable

from jax.interpreters import mlir

from jax_threshold import implementation_choice as _implementation
from jax_threshold.primitive import threshold_backward_p
from jax_threshold.reference import reference_lowering

# Re-exported: the availability registry lives below the primitive, in implementation_choice.
available_implementations = _implementation.available_implementations
check_available = _implementation.check_available
note_unavailable = _implementation.note_unavailable

# implementation name -> platform -> lowering rule
_lowerings: dict[str, dict[str, Callable[..., Any]]] = {}
_auto_choice: dict[str, str] = {}  # platform -> implementation "auto" resolves to
_ffi_targets: list[str] = []
_platforms_with_rules = {None, "cpu"}


def _resolve_for_platform(name: str, platform: str | None) -> str:
  if name == "auto":
    return _auto_choice.get(platform or "", "reference")
  return name


def _make_dispatch_rule(platform: str | None):
  """The lowering rule for one platform (None: platforms without their own rule)."""

  def rule(ctx, grad_output, x, threshold, *, implementation, relu_grad=False):
    chosen = _resolve_for_platform(implementation, platform)
    if chosen == "reference":
      return reference_lowering(ctx, grad_output, x, threshold, implementation=implementation)
    lowering = _lowerings.get(chosen, {}).get(platform) if platform else None
    if lowering is None:
      where = platform or "/".join(ctx.module_context.platforms)
      registered = sorted(_lowerings.get(chosen, {})) or "no platform"
      hint = _implementation.missing_reason(chosen, "use implementation='reference' there")
      raise NotImplementedError(
        f"threshold_backward: implementation {chosen!r} has no lowering for platform "
        f"{where!r} (registered for: {registered}; {hint})"
      )
    if relu_grad:  # only lowerings that run kernels take the choice
      return lowering(
        ctx, grad_output, x, threshold, implementation=implementation, relu_grad=relu_grad
      )
    return lowering(ctx, grad_output, x, threshold, implementation=implementation)

  return rule


# Cacheable (JAX's default): identical equations share one lowered function, so a
# lowering sees a constant threshold as a block argument. Registering the rule
# uncacheable would expose constants, but breaks multi-platform lowering (e.g.
# jax.export for ("cuda", "cpu")) in jax 0.12's lower_per_platform.
mlir.register_lowering(threshold_backward_p, _make_dispatch_rule(None))
mlir.register_lowering(threshold_backward_p, _make_dispatch_rule("cpu"), platform="cpu")


def register_lowering_implementation(
  name: str, lowering_fn, *, platform: str = "cpu", ffi_targets=(), use_for_auto: bool = False
) -> None:
  """Makes `lowering_fn` the lowering of implementation `name` on `platform`.

  For plugins that bring the custom call to another platform (the FFI module
  registers "ffi" for "cpu" this way).

  Args:
    name: an implementation name other than "auto"/"reference" (today "ffi").
    lowering_fn: MLIR lowering rule `(ctx, grad_output, x, threshold, *, implementation)`.
    platform: an MLIR lowering platform ("cpu", "cuda", "rocm", "tpu").
    ffi_targets: the versioned custom-call target names it emits (`ffi_targets()`).
    use_for_auto: whether "auto" resolves to `name` on `platform`.

  Returns:
    None; from then on `available_implementations()` lists `name` and
    `implementation=name` lowers through `lowering_fn` on `platform`.

  Raises:
    ValueError: `name` is "auto", "reference" or unknown.

  Example:
    >>> register_lowering_implementation("ffi", my_rule, platform="cuda",
    ...                                  ffi_targets=("my_target_v1",))
  """
  if name in ("auto", "reference") or name not in _implementation.IMPLEMENTATIONS:
    raise ValueError(
      f"threshold_backward: cannot register implementation {name!r}; "
      f"expected one of {_implementation.IMPLEMENTATIONS[2:]}"
    )
  _lowerings.setdefault(name, {})[platform] = lowering_fn
  if use_for_auto:
    _auto_choice[platform] = name
  for target in ffi_targets:
    if target not in _ffi_targets:
      _ffi_targets.append(target)
  _implementation.mark_available(name)
  if platform not in _platforms_with_rules:
    _platforms_with_rules.add(platform)
    mlir.register_lowering(threshold_backward_p, _make_dispatch_rule(platform), platform=platform)


def ffi_targets() -> tuple[str, ...]:
  """The versioned XLA custom-call target names the registered lowerings emit.

  Returns:
    A tuple of target names, e.g. ("jax_threshold_threshold_backward_v1",
    "jax_threshold_threshold_backward_static_v1"); empty without the extension.
    `jax.export` of a function using them needs
    `DisabledSafetyCheck.custom_call(t)` for each.

  Raises:
    Nothing.

  Example:
    >>> checks = [jax.export.DisabledSafetyCheck.custom_call(t) for t in jt.ffi_targets()]
  """
  return tuple(_ffi_targets)
