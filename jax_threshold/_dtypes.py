"""The dtypes threshold_backward accepts, and the checks that enforce them.

SUPPORTED_DTYPES is the one Python list: CANN's Atlas A2 list plus int64 and float64 (the 64-bit
ones exist as JAX arrays only under x64). Any other dtype is a TypeError that names it and this
list (docs/behaviour.md §1).
"""

import functools

import jax.numpy as jnp
import numpy as np

SUPPORTED_DTYPES = tuple(
  np.dtype(d)
  for d in (
    jnp.float32,
    jnp.float16,
    jnp.bfloat16,
    jnp.int32,
    jnp.int8,
    jnp.uint8,
    jnp.int64,
    jnp.float64,
  )
)

# The supported dtypes that are the same array dtype with and without x64 (a NumPy array of one
# of them keeps it in JAX): a call whose operands have one of them needs no type conversion.
CANONICAL_DTYPES = frozenset(d for d in SUPPORTED_DTYPES if d.itemsize < 8)

# Floating types whose comparison happens in float32 (docs/behaviour.md §1).
NARROW_FLOAT_DTYPES = tuple(np.dtype(d) for d in (jnp.float32, jnp.float16, jnp.bfloat16))

_SUPPORTED_NAMES = ", ".join(d.name for d in SUPPORTED_DTYPES)


def is_integer(dtype) -> bool:
  return jnp.issubdtype(dtype, jnp.integer)


def is_floating(dtype) -> bool:
  return jnp.issubdtype(dtype, jnp.floating)


def check_supported(dtype, what: str) -> np.dtype:
  """Returns `dtype` as an np.dtype, or raises TypeError naming it."""
  try:
    dtype = np.dtype(dtype)
  except TypeError:
    raise TypeError(
      f"threshold_backward: {what} has unsupported type {dtype!r}; "
      f"supported dtypes: {_SUPPORTED_NAMES}"
    ) from None
  if dtype not in SUPPORTED_DTYPES:
    raise TypeError(
      f"threshold_backward: {what} has unsupported dtype {dtype.name}; "
      f"supported dtypes: {_SUPPORTED_NAMES}"
    )
  return dtype


def check_same_dtype(grad_output_dtype, x_dtype) -> np.dtype:
  """Checks both dtypes are supported and equal; returns the common one."""
  g = check_supported(grad_output_dtype, "grad_output")
  x = check_supported(x_dtype, "x")
  if g != x:
    raise TypeError(
      "threshold_backward: grad_output and x must have the same dtype; "
      f"got grad_output {g.name} and x {x.name}"
    )
  return x


@functools.cache  # asked on every call with an array threshold
def threshold_operand_dtypes(x_dtype) -> tuple[np.dtype, ...]:
  """The dtypes the primitive's threshold operand may have for `x_dtype`.

  float16/bfloat16/float32 x: float32; float64 x: float64; integer x of dtype D:
  D, float32 or float64 (the float ones are compared exactly as reals).
  """
  x_dtype = np.dtype(x_dtype)
  if x_dtype in NARROW_FLOAT_DTYPES:
    return (np.dtype(np.float32),)
  if x_dtype == np.float64:
    return (np.dtype(np.float64),)
  return (x_dtype, np.dtype(np.float32), np.dtype(np.float64))
