"""Kubernetes resource quantities (``100m``, ``1.5``, ``128Mi``, ``2Gi``, ``1e3``) as exact fractions.

Follows ``k8s.io/apimachinery/pkg/api/resource/quantity.go`` for parsing; formatting writes CPU as
milli-units (DecimalSI, e.g. ``250m``) and everything else as BinarySI where it divides exactly
(``128Mi``), else as a plain integer.
"""
from __future__ import annotations

import math
from fractions import Fraction

import re2

_SUFFIX = {
    "": Fraction(1),
    "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000),
    "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9), "T": Fraction(10**12),
    "P": Fraction(10**15), "E": Fraction(10**18),
    "Ki": Fraction(2**10), "Mi": Fraction(2**20), "Gi": Fraction(2**30), "Ti": Fraction(2**40),
    "Pi": Fraction(2**50), "Ei": Fraction(2**60),
}
# RE2: linear time (Python's re backtracks quadratically on a long run of digits: 20,000 took 16 s)
_RE = re2.compile(r"^([+-]?[0-9]*\.?[0-9]+|[+-]?[0-9]+\.)(?:(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])|[eE]([+-]?[0-9]+))?$")


class QuantityError(ValueError):
    """Raised for a string that is not a Kubernetes quantity."""


_MEMO_MAX = 8192  # a run sees the same few quantity strings thousands of times


def _memo(cache: dict, value, compute):
    """``compute(value)``, remembered in ``cache`` for string values (up to :data:`_MEMO_MAX`)."""
    if type(value) is not str:
        return compute(value)
    hit = cache.get(value)
    if hit is None:
        hit = compute(value)
        if len(cache) < _MEMO_MAX:
            cache[value] = hit
    return hit


_PARSED: dict[str, Fraction] = {}
_MILLI: dict[str, int] = {}
_WHOLE: dict[str, int] = {}


def parse_quantity(value) -> Fraction:
    """Parse a quantity (str, int or float) into an exact :class:`Fraction` of base units.

    Raises:
        QuantityError: the value is not a valid quantity.
    """
    return _memo(_PARSED, value, _parse_quantity)


def _parse_quantity(value) -> Fraction:
    if isinstance(value, bool):
        raise QuantityError(f"invalid quantity {value!r}")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise QuantityError(f"invalid quantity {value!r}")
        return Fraction(value).limit_denominator(10**9)
    if not isinstance(value, str):
        raise QuantityError(f"invalid quantity {value!r}")
    m = _RE.match(value.strip())
    if not m:
        raise QuantityError(f"invalid quantity {value!r}")
    number, suffix, exponent = m.groups()
    try:
        base = Fraction(number)
        if exponent is not None:
            return _scaled(base, int(exponent), number)
    except ValueError:  # more digits than Python converts (sys.get_int_max_str_digits)
        raise QuantityError(f"invalid quantity {value[:40]!r}...: too many digits") from None
    return base * _SUFFIX[suffix or ""]


_MAX_MAGNITUDE = Fraction(2 ** 63 - 1)
_NANO = Fraction(1, 10 ** 9)


def _scaled(base: Fraction, exponent: int, digits: str) -> Fraction:
    """``base * 10**exponent`` without computing a power of ten that cannot matter: as Kubernetes,
    a magnitude over 2^63-1 is capped there and a non-zero value below a nano-unit is rounded up
    (``1e999999`` would otherwise take minutes and gigabytes)."""
    if base == 0:
        return base
    magnitude = len(digits.strip("+-.").lstrip("0")) + exponent  # an upper bound of log10 |value| + 1
    if magnitude > 20:
        return _MAX_MAGNITUDE if base > 0 else -_MAX_MAGNITUDE
    if exponent < -(len(digits) + 12):
        return _NANO if base > 0 else Fraction(0)
    value = base * Fraction(10) ** exponent
    if abs(value) > _MAX_MAGNITUDE:
        return _MAX_MAGNITUDE if value > 0 else -_MAX_MAGNITUDE
    return value


def milli_value(value) -> int:
    """The quantity in milli-units, rounded up (``0.1`` -> 100, ``1`` -> 1000).

    Raises:
        QuantityError: the value is not a valid quantity.
    """
    return _memo(_MILLI, value, lambda v: math.ceil(parse_quantity(v) * 1000))


def int_value(value) -> int:
    """The quantity in whole units, rounded up (``128Mi`` -> 134217728, ``100m`` -> 1).

    Raises:
        QuantityError: the value is not a valid quantity.
    """
    return _memo(_WHOLE, value, lambda v: math.ceil(parse_quantity(v)))


def format_quantity(amount: Fraction, resource: str) -> str:
    """Render an amount for ``resource``: CPU in milli-units (``1500m``, ``2``), others BinarySI."""
    if resource == "cpu":
        milli = math.ceil(amount * 1000)
        return str(milli // 1000) if milli % 1000 == 0 else f"{milli}m"
    whole = math.ceil(amount)
    if amount != whole:
        milli = math.ceil(amount * 1000)
        return f"{milli}m"
    for suffix in ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki"):
        unit = int(_SUFFIX[suffix])
        if whole and whole % unit == 0:
            return f"{whole // unit}{suffix}"
    return str(whole)


def add_resource_lists(*lists: dict | None) -> dict[str, Fraction]:
    """Sum ResourceLists (``{"cpu": "1", "memory": "1Gi"}``) into exact fractions per resource."""
    total: dict[str, Fraction] = {}
    for rl in lists:
        for key, val in (rl or {}).items():
            total[key] = total.get(key, Fraction(0)) + parse_quantity(val)
    return total


DECIMAL_SI, BINARY_SI, DECIMAL_EXPONENT = "DecimalSI", "BinarySI", "DecimalExponent"
_DECIMAL_SUFFIXES = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_BINARY_SUFFIXES = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


_FORMATS: dict[str, str] = {}


def quantity_format(value) -> str:
    """The format a quantity keeps when Kubernetes prints it again (``resource.Quantity.Format``):
    BinarySI for ``Ki``..``Ei`` suffixes, DecimalExponent for ``e``/``E`` exponents, else DecimalSI
    (integers included)."""
    return _memo(_FORMATS, value, _quantity_format)


def _quantity_format(value) -> str:
    if isinstance(value, str):
        m = _RE.match(value.strip())
        if m and m.group(2) and m.group(2).endswith("i"):
            return BINARY_SI
        if m and m.group(3) is not None:
            return DECIMAL_EXPONENT
    return DECIMAL_SI


def canonical_quantity(amount: Fraction, fmt: str = DECIMAL_SI) -> str:
    """``resource.Quantity.String()`` of ``amount`` in format ``fmt`` (``quantity.go: CanonicalizeBytes``).

    DecimalSI writes the integer mantissa with the largest power of 1000 suffix (``1500m``, ``3k``,
    ``1500``); BinarySI the largest power of 1024 that divides the value (``384Mi``,
    ``1953125Ki``), falling back to DecimalSI for values strictly between -1024 and 1024 and for
    fractions; DecimalExponent writes ``<mantissa>e<exponent>``. Values finer than nano-units are
    rounded up to the nano-unit, as Kubernetes does.
    """
    amount = Fraction(math.ceil(amount * 10**9), 10**9) if (amount * 10**9).denominator != 1 else amount
    if fmt == BINARY_SI and abs(amount) >= 1024 and amount.denominator == 1:
        number, power = int(amount), 0
        while number % 1024 == 0 and power < len(_BINARY_SUFFIXES) - 1:
            number //= 1024
            power += 1
        return f"{number}{_BINARY_SUFFIXES[power]}"
    if amount == 0:
        return "0"
    # mantissa * 10**exponent with an integer mantissa free of trailing zeros, then the exponent
    # lowered to a multiple of 3 (AsCanonicalBytes)
    exponent = 0
    while amount.denominator != 1:
        amount *= 10
        exponent -= 1
    mantissa = int(amount)
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    while exponent % 3:
        mantissa *= 10
        exponent -= 1
    if fmt == DECIMAL_EXPONENT:
        return f"{mantissa}e{exponent}" if exponent else str(mantissa)
    suffix = _DECIMAL_SUFFIXES.get(exponent)
    return f"{mantissa}{suffix}" if suffix is not None else f"{mantissa}e{exponent}"


def canonical_string(value) -> str:
    """A quantity as Kubernetes writes it back (``2000m`` -> ``2``, ``1024Mi`` -> ``1Gi``).

    Raises:
        QuantityError: the value is not a valid quantity.
    """
    return canonical_quantity(parse_quantity(value), quantity_format(value))
