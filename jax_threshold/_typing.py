"""Type aliases of the public API's arguments."""

import decimal
import fractions
from typing import Union

from jax.typing import ArrayLike

# A threshold (or the forward's replacement value): any real number a user can write, exactly
# (a Python int of any size, a float, a Fraction, a Decimal, a NumPy scalar, a 0-d array).
RealLike = Union[ArrayLike, fractions.Fraction, decimal.Decimal]

__all__ = ["ArrayLike", "RealLike"]
