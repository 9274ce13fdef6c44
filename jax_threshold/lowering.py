"""Which lowering of threshold_backward runs: the implementation choice and the per-platform rules.

Names (`primitive.IMPLEMENTATIONS`): "reference" (the fusable jnp lowering, every platform),
"ffi" (the XLA FFI custom call, where the native extension registered it) and "auto" (resolved
per platform when lowering). A call's `implementation=None` means the default: the innermost
`jax_threshold.implementation(...)` block of this thread, else the environment variable
JAX_THRESHOLD_IMPLEMENTATION (read when tracing), else "auto". The block is a JAX user context,
part of jit's cache key: a function jitted under "reference" and called again inside
`implementation("ffi")` is traced again.

Every platform lowers through a rule here that resolves the primitive's `implementation` param:
"reference" (and "auto" where the platform chose nothing else) is `reference.py`; other
implementations plug in with `register_lowering_implementation` (ffi.py does, for "ffi").
"""

import contextlib
import os
from typing import Any, Callable, Iterator

import jax
from jax.interpreters import mlir

from jax_threshold.primitive import IMPLEMENTATIONS
from jax_threshold.primitive import check_implementation
from jax_threshold.primitive import threshold_backward_p
from jax_threshold.reference import reference_lowering

ENV_VAR = "JAX_THRESHOLD_IMPLEMENTATION"

# The implementation of a `jax_threshold.implementation(...)` block (None outside any).
_scoped_implementation = jax.make_user_context(default_value=None)

_registered: set[str] = set()  # implementations with a lowering on at least one platform
_missing_reasons: dict[str, str] = {}  # implementation name -> why it is unavailable


def note_unavailable(name: str, reason: str) -> None:
  """Records why implementation `name` is missing (shown in the errors that need it)."""
  _missing_reasons[name] = reason


def available_implementations() -> tuple[str, ...]:
  """The implementation names usable here, besides "auto".

  Returns:
    ("reference",) plus every implementation registered on at least one
    platform: ("reference", "ffi") when the native extension is built.

  Example:
    >>> jax_threshold.available_implementations()
    ('reference', 'ffi')
  """
  return ("reference",) + tuple(n for n in IMPLEMENTATIONS if n in _registered)


def check_available(name: str, where: str = "threshold_backward") -> None:
  """Raises ValueError when `name` ("auto"/"reference" always are) is not registered."""
  if name in ("auto", "reference") or name in _registered:
    return
  reason = _missing_reasons.get(
    name,
    "the native extension jax_threshold._native is missing; build the package "
    "with its C++ extension (pip install .)",
  )
  raise ValueError(f"{where}: implementation {name!r} is not available: {reason}")


def default_implementation() -> str:
  """The implementation a call with `implementation=None` uses right now."""
  scoped = _scoped_implementation.value
  if scoped is not None:
    return scoped
  from_env = os.environ.get(ENV_VAR)
  if from_env:
    if from_env not in IMPLEMENTATIONS:
      raise ValueError(
        f"threshold_backward: ${ENV_VAR}={from_env!r} is not one of {IMPLEMENTATIONS}"
      )
    return from_env
  return "auto"


def resolve(name: str | None) -> str:
  """A call's `implementation` argument, validated; None becomes the default. "auto" stays
  "auto": the lowering resolves it per platform."""
  name = default_implementation() if name is None else check_implementation(name)
  check_available(name)
  return name


@contextlib.contextmanager
def implementation(name: str) -> Iterator[None]:
  """Makes `name` the default implementation inside the block.

  Args:
    name: "auto" (per platform: the reference lowering on CPU, the custom call
      where it is registered for auto), "reference" (the fusable jnp lowering)
      or "ffi" (the XLA FFI custom call running the AscendC kernels).

  Returns:
    A context manager. Calls with `implementation=None` inside the block use
    `name`; it is part of jit's cache key, so a function jitted under another
    implementation is traced again.

  Raises:
    ValueError: an unknown name, or "ffi" when the native extension is not
      available (the message says why).

  Example:
    >>> with jax_threshold.implementation("reference"):
    ...   y = jax.jit(f)(x)  # every threshold_backward inside f lowers to jnp
  """
  name = check_implementation(name, where="jax_threshold.implementation")
  check_available(name, where="jax_threshold.implementation")
  with _scoped_implementation(name):
    yield


# implementation name -> platform -> lowering rule
_lowerings: dict[str, dict[str, Callable[..., Any]]] = {}
_auto_choice: dict[str, str] = {}  # platform -> implementation "auto" resolves to
_ffi_targets: list[str] = []
_platforms_with_rules = {None, "cpu"}


def _resolve_for_platform(name: str, platform: str | None) -> str:
  if name == "auto":
    return _auto_choice.get(platform or "", "reference")
  return name


def _lowering_platforms(ctx) -> tuple[str, ...]:
  """The platforms this rule lowers for: in a multi-platform lowering (jax.export with several
  `platforms`), JAX calls each rule with only the platforms that share it."""
  return tuple(getattr(ctx, "platforms", None) or ctx.module_context.platforms)


def _make_dispatch_rule(platform: str | None):
  """The lowering rule for one platform (None: platforms without their own rule)."""

  def rule(ctx, grad_output, x, threshold, *, implementation, relu_grad=False):
    chosen = _resolve_for_platform(implementation, platform)
    if chosen == "reference":
      return reference_lowering(ctx, grad_output, x, threshold, implementation=implementation)
    lowering = _lowerings.get(chosen, {}).get(platform) if platform else None
    if lowering is None:
      where = platform or "/".join(_lowering_platforms(ctx))
      registered = sorted(_lowerings.get(chosen, {})) or "no platform"
      hint = _missing_reasons.get(chosen, "use implementation='reference' there")
      raise NotImplementedError(
        f"threshold_backward: implementation {chosen!r} has no lowering for platform "
        f"{where!r} (registered for: {registered}; {hint})"
      )
    kernel_choice = {"relu_grad": True} if relu_grad else {}  # only kernel lowerings take it
    return lowering(ctx, grad_output, x, threshold, implementation=implementation, **kernel_choice)

  return rule


# Cacheable (JAX's default), so a lowering sees a constant threshold as a block argument: an
# uncacheable rule would expose constants, but breaks multi-platform lowering in jax 0.12.
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
  if name in ("auto", "reference") or name not in IMPLEMENTATIONS:
    raise ValueError(
      f"threshold_backward: cannot register implementation {name!r}; "
      f"expected one of {IMPLEMENTATIONS[2:]}"
    )
  _lowerings.setdefault(name, {})[platform] = lowering_fn
  if use_for_auto:
    _auto_choice[platform] = name
  for target in ffi_targets:
    if target not in _ffi_targets:
      _ffi_targets.append(target)
  _registered.add(name)
  _missing_reasons.pop(name, None)
  if platform not in _platforms_with_rules:
    _platforms_with_rules.add(platform)
    mlir.register_lowering(threshold_backward_p, _make_dispatch_rule(platform), platform=platform)


def ffi_targets() -> tuple[str, ...]:
  """The versioned XLA custom-call target names the registered lowerings emit.

  Returns:
    A tuple of target names, e.g. ("jax_threshold_threshold_backward_v2",); empty
    without the extension. `jax.export` of a function using them needs
    `DisabledSafetyCheck.custom_call(t)` for each.

  Example:
    >>> checks = [jax.export.DisabledSafetyCheck.custom_call(t) for t in jt.ffi_targets()]
  """
  return tuple(_ffi_targets)
