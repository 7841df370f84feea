"""Shared machinery of Problem and KernelKey schemas: validators that raise ckcore errors,
canonical dicts, names and content hashes.

Plugins define frozen attrs classes deriving from :class:`ProblemBase` or :class:`KeyBase`;
the core never needs to know their fields.
"""

from __future__ import annotations

import enum
import hashlib
import json
import re
from typing import Any, ClassVar

import attrs

from .errors import InvalidKernelKey, UnsupportedProblem

__all__ = [
    "ProblemBase",
    "KeyBase",
    "IDENTIFIER",
    "canonical",
    "sha256_json",
    "positive_int",
    "non_negative_int",
    "member_of",
    "power_of_two_in",
    "int_in",
    "boolean",
    "enum_converter",
    "template_fields",
]

IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")


def canonical(value: Any) -> Any:
    """A JSON-able canonical form: enums by value, tuples as lists, dicts with sorted keys."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (tuple, list)):
        return [canonical(v) for v in value]
    if isinstance(value, dict):
        return {str(k): canonical(value[k]) for k in sorted(value)}
    if attrs.has(type(value)):
        return {f.name: canonical(getattr(value, f.name)) for f in attrs.fields(type(value))}
    return value


def sha256_json(obj: Any) -> str:
    """sha256 hex digest of the canonical JSON of ``obj`` (sorted keys, no whitespace)."""
    text = json.dumps(canonical(obj), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _fail(instance: Any, field: str, value: Any, expected: str):
    _fail_cls(type(instance), field, value, expected)


def positive_int(instance, attribute, value):
    """attrs validator: an int ≥ 1 (bool is not an int here)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        _fail(instance, attribute.name, value, "an integer >= 1")


def non_negative_int(instance, attribute, value):
    """attrs validator: an int ≥ 0."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        _fail(instance, attribute.name, value, "an integer >= 0")


def power_of_two_in(lo: int, hi: int):
    """attrs validator: a power of two in [lo, hi]."""

    def check(instance, attribute, value):
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi or value & (value - 1):
            _fail(instance, attribute.name, value, f"a power of two in [{lo}, {hi}]")

    return check


def int_in(lo: int, hi: int):
    """attrs validator: an integer in [lo, hi]."""

    def check(instance, attribute, value):
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            _fail(instance, attribute.name, value, f"an integer in [{lo}, {hi}]")

    return check


def boolean(instance, attribute, value):
    """attrs validator: True or False."""
    if not isinstance(value, bool):
        _fail(instance, attribute.name, value, "true or false")


def member_of(enum_cls: type[enum.Enum]):
    """attrs validator: a member of ``enum_cls`` (after :func:`enum_converter`)."""

    def check(instance, attribute, value):
        if not isinstance(value, enum_cls):
            _fail(instance, attribute.name, value, f"one of {', '.join(m.value for m in enum_cls)}")

    return check


def enum_converter(enum_cls: type[enum.Enum]):
    """attrs converter: a value to the enum member of that value; unknown values pass through
    unchanged so that :func:`member_of` can reject them with a clear error."""

    def convert(value):
        if isinstance(value, enum_cls):
            return value
        try:
            return enum_cls(value)
        except (ValueError, TypeError):
            return value

    return convert


class _SchemaBase:
    """to_dict / from_dict / sorting support for attrs schema classes."""

    def to_dict(self) -> dict[str, Any]:
        """The fields in canonical JSON-able form."""
        return canonical(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]):
        """Build from :meth:`to_dict` output; unknown fields are an error."""
        names = {f.name for f in attrs.fields(cls)}
        extra = set(data) - names
        if extra:
            _fail_cls(cls, sorted(extra)[0], data[sorted(extra)[0]], f"only the fields {', '.join(sorted(names))}")
        kwargs = {k: (tuple(v) if isinstance(v, list) else v) for k, v in data.items()}
        return cls(**kwargs)


def _fail_cls(cls, field, value, expected):
    if issubclass(cls, KeyBase):
        raise InvalidKernelKey(cls.__name__, [f"{field}={value!r}: expected {expected}"])
    raise UnsupportedProblem(field, value, expected, op=getattr(cls, "op", None))


class ProblemBase(_SchemaBase):
    """Base of an op's problem schema (a frozen attrs class). Subclasses set ``op`` and
    implement :attr:`name`, a readable spelling of every field."""

    op: ClassVar[str] = ""

    @property
    def name(self) -> str:
        fields = "_".join(f"{k}{v}" for k, v in self.to_dict().items())
        return f"{self.op}_{fields}"


class KeyBase(_SchemaBase):
    """Base of a kernel family's key schema (a frozen attrs class). Subclasses implement
    :attr:`name`: every field that distinguishes the instance, readable, an identifier."""

    @property
    def name(self) -> str:  # pragma: no cover - every family overrides it
        raise NotImplementedError


def template_fields(key: KeyBase, values: dict[str, Any] | None = None) -> dict[str, Any]:
    """The key's fields (or, given, ``values`` derived from the key) as template input, each
    checked to be a number, a bool, or an identifier-like string (tuples of those allowed), so no
    value can inject code.

    :raises InvalidKernelKey: a field holds anything else.
    """
    out: dict[str, Any] = {}
    bad: list[str] = []

    def ok(v) -> bool:
        if isinstance(v, bool) or isinstance(v, int) or isinstance(v, float):
            return True
        if isinstance(v, str):
            return bool(IDENTIFIER.match(v))
        if isinstance(v, (list, tuple)):
            return all(ok(x) for x in v)
        return False

    for field, value in (key.to_dict() if values is None else values).items():
        if ok(value):
            out[field] = tuple(value) if isinstance(value, list) else value
        else:
            bad.append(f"{field}={value!r}: templates accept only numbers, bools and identifiers")
    if bad:
        raise InvalidKernelKey(key.name if IDENTIFIER.match(str(getattr(key, "name", ""))) else repr(key), bad)
    return out
