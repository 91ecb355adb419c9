"""A schema codec for the bytes nodes send each other: values in, bytes out, and back.

Bytes from another process are input, like a client's (STYLE rule 14): nothing here
names a class, a module or a function from the payload. A :class:`Registry` is an
explicit list of the exact types that may cross, each under a short tag; a payload can
only ask for a tag of that list, and every field it brings is checked against the
type the class declares before the value is built (:func:`fits`). Anything else — a
pickle, an unknown tag, a field of the wrong type, a value too big or too deep — is a
:class:`WireError`, raised before any object of the payload's choosing exists.

The bytes are MessagePack (``msgspec.msgpack``). Plain values (None, bool, int, float,
str, bytes) are themselves; every other value is an array whose first element says
what it is:

- ``["t", *items]`` a tuple, ``["l", *items]`` a list, ``["f", *items]`` a frozenset,
  ``["s", *items]`` a set, ``["d", k1, v1, k2, v2, ...]`` a dict and ``["m", ...]`` a
  read-only mapping (:class:`types.MappingProxyType`), keys of any kind;
- ``["o", tag, {field: value}]`` a registered dataclass (its ``init`` fields by name: a
  field the class does not have is refused, one left out takes its default);
- ``["e", tag, value]`` a registered enum member, by value;
- ``["x", tag, {"args": [...], "attrs": {name: value}}]`` a registered exception: its
  arguments and its public attributes (the facts a rule error carries), built without
  calling its ``__init__``;
- ``["a", tag, {attribute: value}]`` a registered plain class (:class:`Attrs`): each
  attribute the registry declares for it, with its declared type, and no other.

Limits (:class:`Limits`): bytes per message, nesting depth, values per message.

**Version.** A registry made with a ``version`` (the cluster's:
:data:`meeple.bus.schema.SCHEMA`) sends every message as ``["V", version, value]`` and
reads only messages of its own version: another version's, or one without the header
(an older node's), is a :class:`WireError` of kind ``version`` (issue 32.4).
"""

from __future__ import annotations

import collections.abc
import dataclasses
import enum
import logging
import re
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

__all__ = [
    "Attrs",
    "EncodeError",
    "Limits",
    "Registry",
    "WireError",
    "decode_json",
    "fits",
    "refused",
]

logger = logging.getLogger(__name__)


class WireError(ValueError):
    """A payload that does not decode: not this schema, too big, too deep, a tag that is
    not registered, or a field whose value is not of its declared type."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        """A short word for what was wrong (``size``, ``format``, ``tag``, ``type``,
        ``depth``, ``items``, ``shape``): what a log line counts by."""


class EncodeError(TypeError):
    """A value this registry cannot send (a type not registered, an attribute not
    declared): a bug of the sender, never the peer's."""


@dataclass(frozen=True, slots=True)
class Limits:
    """How much one message may hold. ``max_bytes`` defaults to NATS's own default
    payload limit (1 MiB); ``max_depth`` counts nested containers and objects;
    ``max_items`` counts every value in the message (containers included)."""

    max_bytes: int = 1 << 20
    max_depth: int = 48
    max_items: int = 200_000


@dataclass(frozen=True, slots=True)
class Attrs:
    """A class that is not a dataclass, sent attribute by attribute: ``fields`` maps each
    attribute that crosses to its type (the registry's declaration, checked on the way
    in; an attribute the value has and ``fields`` does not name is an
    :class:`EncodeError`, so nothing new crosses unnoticed). Built with
    ``cls.__new__`` and the attributes set, without ``__init__``."""

    cls: type
    fields: Mapping[str, object]


_SCALARS = (type(None), bool, int, float, str, bytes)
_CONTAINERS: dict[str, Callable[[list[Any]], object]] = {
    "t": tuple,
    "l": list,
    "f": frozenset,
    "s": set,
}


class Registry:
    """The types that may cross, by tag (see the module doc). Tags are the classes'
    names, which must be unique in one registry (two classes of one name: pass
    ``tags``)."""

    def __init__(
        self,
        types_: Iterable[type | Attrs],
        *,
        tags: Mapping[type, str] | None = None,
        limits: Limits = Limits(),
        version: int | None = None,
    ) -> None:
        self.limits = limits
        self.version = version
        """The schema version every message carries and must carry (None: none)."""
        self._by_tag: dict[str, type | Attrs] = {}
        self._tag_of: dict[type, str] = {}
        for entry in types_:
            cls = entry.cls if isinstance(entry, Attrs) else entry
            tag = (tags or {}).get(cls, cls.__name__)
            if tag in self._by_tag:
                raise ValueError(f"two types tagged {tag!r}: give one another tag")
            if not isinstance(entry, Attrs) and not (
                dataclasses.is_dataclass(cls)
                or issubclass(cls, enum.Enum)
                or issubclass(cls, Exception)
            ):
                raise ValueError(f"{cls.__qualname__} is no dataclass, enum or exception")
            self._by_tag[tag] = entry
            self._tag_of[cls] = tag
        self._members: dict[str, dict[object, enum.Enum]] = {
            tag: dict(entry._value2member_map_)
            for tag, entry in self._by_tag.items()
            if isinstance(entry, type) and issubclass(entry, enum.Enum)
        }
        names = {cls.__name__: cls for cls in self._tag_of}
        self._hints: dict[type, dict[str, object]] = {}
        self._fields: dict[type, tuple[str, ...]] = {}
        self.unchecked: list[str] = []
        """Fields whose declared type could not be resolved (checked as ``object``)."""
        for entry in self._by_tag.values():
            if isinstance(entry, Attrs):
                self._hints[entry.cls] = dict(entry.fields)
            elif dataclasses.is_dataclass(entry):
                self._hints[entry] = self._resolve(entry, names)
                self._fields[entry] = tuple(f.name for f in dataclasses.fields(entry) if f.init)

    def _resolve(self, cls: type, names: Mapping[str, type]) -> dict[str, object]:
        """``cls``'s field types: from its module's names first, then (a name its module
        imports only for type checking) from the registry's classes of that name."""
        import sys

        module = dict(vars(sys.modules[cls.__module__]))
        extra = {n: c for n, c in names.items() if n not in module}
        try:
            return typing.get_type_hints(cls, localns=extra)
        except Exception:
            pass
        hints: dict[str, object] = {}
        for f in dataclasses.fields(cls):
            annotation = f.type
            if isinstance(annotation, str):
                try:
                    annotation = eval(annotation, module, {**vars(typing), **extra})
                except Exception:
                    self.unchecked.append(f"{cls.__qualname__}.{f.name}")
                    annotation = object
            hints[f.name] = annotation
        return hints

    @property
    def tags(self) -> Mapping[str, type | Attrs]:
        return types.MappingProxyType(self._by_tag)

    def __contains__(self, cls: object) -> bool:
        return cls in self._tag_of

    # --- out ------------------------------------------------------------------------------

    def encode(self, value: object) -> bytes:
        """``value`` as bytes; :class:`EncodeError` for a value that may not cross."""
        tree = self._tree(value)
        if self.version is not None:
            tree = ["V", self.version, tree]
        try:
            return msgspec.msgpack.encode(tree)
        except OverflowError as e:
            raise EncodeError(f"an integer too big to cross: {e}") from None

    def _tree(self, value: object) -> object:
        if type(value) in _SCALARS:  # not an IntEnum's member: it is sent as "e"
            return value
        cls = type(value)
        if cls in (tuple, list, frozenset, set):
            kind = {tuple: "t", list: "l", frozenset: "f", set: "s"}[cls]
            return [kind, *(self._tree(v) for v in value)]  # type: ignore[attr-defined]
        if cls is dict or cls is types.MappingProxyType:
            flat: list[object] = ["d" if cls is dict else "m"]
            for k, v in value.items():  # type: ignore[attr-defined]
                flat += (self._tree(k), self._tree(v))
            return flat
        tag = self._tag_of.get(cls)
        if tag is None:
            raise EncodeError(f"{cls.__module__}.{cls.__qualname__} may not cross the bus")
        entry = self._by_tag[tag]
        if isinstance(entry, Attrs):
            have = _attributes(value)
            extra = have - set(entry.fields)
            if extra:
                raise EncodeError(f"{cls.__qualname__} has attributes not declared: {extra}")
            body = {}
            for name, hint in entry.fields.items():
                field_value = getattr(value, name)
                if not fits(field_value, hint):  # e.g. a whole game, RNG and all
                    raise EncodeError(
                        f"{cls.__qualname__}.{name} may not cross as it is "
                        f"(a {type(field_value).__name__}, not {_name(hint)})"
                    )
                body[name] = self._tree(field_value)
            return ["a", tag, body]
        if isinstance(value, enum.Enum):
            return ["e", tag, self._tree(value.value)]
        if isinstance(value, Exception):
            attrs = {k: self._tree(v) for k, v in vars(value).items() if not k.startswith("_")}
            return ["x", tag, {"args": self._tree(value.args), "attrs": attrs}]
        return ["o", tag, {n: self._tree(getattr(value, n)) for n in self._fields[cls]}]

    # --- in -------------------------------------------------------------------------------

    def decode(self, data: bytes, expect: object = object) -> Any:
        """The value ``data`` holds, checked against ``expect`` (a type hint: a class, a
        union, ``object``); :class:`WireError` for anything else (module doc)."""
        if not isinstance(data, bytes | bytearray | memoryview):
            raise WireError("format", "not bytes")
        if len(data) > self.limits.max_bytes:
            raise WireError("size", f"{len(data)} bytes, more than {self.limits.max_bytes}")
        try:
            raw = msgspec.msgpack.decode(data)
        except (msgspec.DecodeError, RecursionError, ValueError, TypeError) as e:
            raise WireError("format", str(e)[:200]) from None
        if self.version is not None:
            raw = self._versioned(raw)
        value = _Reader(self).value(raw, 0)
        if not fits(value, expect):
            raise WireError("type", f"a {type(value).__name__} where {_name(expect)} belongs")
        return value

    def fits(self, value: object, expect: object) -> bool:
        """Whether ``value``, handed over in one process without bytes
        (:class:`~meeple.bus.base.Sealed`), is of the type ``expect``: the check
        :meth:`decode` makes of what it built."""
        return fits(value, expect)

    def _versioned(self, raw: object) -> object:
        """The value of a ``["V", version, value]`` message of this registry's version."""
        if type(raw) is list and len(raw) == 3 and raw[0] == "V" and type(raw[1]) is int:
            if raw[1] == self.version:
                return raw[2]
            found = f"schema {raw[1]}"
        else:
            found = "no schema version (an older node's)"
        raise WireError("version", f"a message of {found}; this node reads schema {self.version}")


class _Reader:
    """One message's walk: the depth and the number of values so far, against the limits."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self.items = 0
        self.max_items = registry.limits.max_items
        self.max_depth = registry.limits.max_depth

    def value(self, raw: object, depth: int) -> object:
        self.items += 1
        if self.items > self.max_items:
            raise WireError("items", f"more than {self.max_items} values")
        if type(raw) in _SCALARS:
            return raw
        if type(raw) is not list:
            raise WireError("format", f"a bare {type(raw).__name__}")
        if depth >= self.max_depth:
            raise WireError("depth", f"nested deeper than {self.max_depth}")
        if not raw or not isinstance(raw[0], str):
            raise WireError("format", "an array without its kind")
        kind, rest = raw[0], raw[1:]
        if kind == "e" and len(rest) == 2 and type(rest[0]) is str and type(rest[1]) in _SCALARS:
            # An enum member by a plain value (the most frequent object: a board's
            # premiums): looked up directly.
            members = self.registry._members.get(rest[0])
            member = None if members is None else members.get(rest[1])
            if member is not None and type(member.value) is type(rest[1]):
                self.items += 1
                return member
        maker = _CONTAINERS.get(kind)
        if maker is not None:
            items = [self.value(v, depth + 1) for v in rest]
            try:
                return maker(items)
            except TypeError as e:  # an unhashable item of a set
                raise WireError("shape", str(e)) from None
        if kind in ("d", "m"):
            if len(rest) % 2:
                raise WireError("shape", "a mapping with a key and no value")
            out: dict[object, object] = {}
            for i in range(0, len(rest), 2):
                key = self.value(rest[i], depth + 1)
                try:
                    out[key] = self.value(rest[i + 1], depth + 1)
                except TypeError as e:
                    raise WireError("shape", str(e)) from None
            return out if kind == "d" else types.MappingProxyType(out)
        if kind in ("o", "e", "x", "a"):
            if len(rest) != 2 or not isinstance(rest[0], str):
                raise WireError("shape", f"{kind!r} takes a tag and a body")
            entry = self.registry._by_tag.get(rest[0])
            if entry is None:
                raise WireError("tag", f"{rest[0][:60]!r} may not cross the bus")
            return self._build(kind, entry, rest[1], depth)
        raise WireError("format", f"no kind {kind[:20]!r}")

    def _build(self, kind: str, entry: type | Attrs, body: object, depth: int) -> object:
        if isinstance(entry, Attrs):
            if kind != "a":
                raise WireError("shape", f"{entry.cls.__name__} is sent as 'a'")
            fields = self._fields(body, entry.fields, entry.cls, depth, every=True)
            obj: object = object.__new__(entry.cls)
            for name, value in fields.items():
                object.__setattr__(obj, name, value)
            return obj
        cls = entry
        if issubclass(cls, enum.Enum):
            if kind != "e":
                raise WireError("shape", f"{cls.__name__} is sent as 'e'")
            try:
                return cls(self.value(body, depth + 1))
            except (ValueError, TypeError) as e:
                raise WireError("type", str(e)[:200]) from None
        if issubclass(cls, Exception):
            if kind != "x" or type(body) is not dict or set(body) != {"args", "attrs"}:
                raise WireError("shape", f"{cls.__name__} is sent as 'x' with args and attrs")
            args = self.value(body["args"], depth + 1)
            attrs = body["attrs"]
            if not isinstance(args, tuple) or type(attrs) is not dict:
                raise WireError("shape", f"{cls.__name__}'s args or attrs")
            error = cls.__new__(cls)
            error.args = args
            for name, raw in attrs.items():
                if not isinstance(name, str) or not name.isidentifier() or name.startswith("_"):
                    raise WireError("shape", f"{cls.__name__}: no attribute {str(name)[:60]!r}")
                setattr(error, name, self.value(raw, depth + 1))
            return error
        if kind != "o":
            raise WireError("shape", f"{cls.__name__} is sent as 'o'")
        hints = self.registry._hints[cls]
        names = self.registry._fields[cls]
        fields = self._fields(body, {n: hints.get(n, object) for n in names}, cls, depth)
        try:
            return cls(**fields)
        except WireError:
            raise
        except Exception as e:  # the class's own checks (__post_init__) refuse it
            raise WireError("type", f"{cls.__name__}: {e}"[:200]) from None

    def _fields(
        self,
        body: object,
        declared: Mapping[str, object],
        cls: type,
        depth: int,
        *,
        every: bool = False,
    ) -> dict[str, object]:
        if type(body) is not dict:
            raise WireError("shape", f"{cls.__name__}'s fields are not a map")
        out: dict[str, object] = {}
        for name, raw in body.items():
            if not isinstance(name, str) or name not in declared:
                raise WireError("shape", f"{cls.__name__} has no field {str(name)[:60]!r}")
            value = self.value(raw, depth + 1)
            if not fits(value, declared[name]):
                raise WireError(
                    "type",
                    f"{cls.__name__}.{name}: a {type(value).__name__}, not {_name(declared[name])}",
                )
            out[name] = value
        if every and len(out) != len(declared):
            missing = sorted(set(declared) - set(out))
            raise WireError("shape", f"{cls.__name__} without {missing}")
        return out


def _attributes(value: object) -> set[str]:
    names = set(getattr(value, "__dict__", {}))
    for klass in type(value).__mro__:
        slots = vars(klass).get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name not in ("__dict__", "__weakref__") and hasattr(value, name):
                names.add(name)
    return names


def _name(hint: object) -> str:
    return getattr(hint, "__name__", None) or str(hint)


def fits(value: object, hint: object) -> bool:
    """Whether ``value`` is of the type ``hint`` declares: classes by ``isinstance``
    (an int fits a float), unions, ``Literal``, ``None``, and the items of tuples,
    lists, sets and mappings (``tuple[X, ...]``, ``Mapping[K, V]``, ...). ``Any`` and
    ``object`` take anything; a callable or a type takes nothing (none crosses)."""
    return _checker(hint)(value)


_Check = Callable[[object], bool]


def _anything(value: object) -> bool:
    return True


def _nothing(value: object) -> bool:
    return False


def _checker(hint: object) -> _Check:
    """``hint``'s check, made once per hint (the types a registry declares are few)."""
    try:
        found = _CHECKERS.get(hint)
    except TypeError:  # an unhashable hint: made each time
        return _make(hint)
    if found is None:
        found = _CHECKERS[hint] = _make(hint)
    return found


_CHECKERS: dict[object, _Check] = {}


def _make(hint: object) -> _Check:
    if hint is Any or hint is object:
        return _anything
    if hint is None or hint is type(None):
        return lambda v: v is None
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Union or origin is types.UnionType:
        checks = tuple(_checker(a) for a in args)
        return lambda v: any(c(v) for c in checks)
    if origin is typing.Literal:
        return lambda v: any(v == a and type(v) is type(a) for a in args)
    if origin is typing.Annotated:
        return _checker(args[0])
    if isinstance(hint, typing.TypeVar):
        return _anything if hint.__bound__ is None else _checker(hint.__bound__)
    if origin is None and isinstance(hint, type):
        if hint is float:
            return lambda v: isinstance(v, int | float)
        if vars(hint).get("_is_protocol") and not vars(hint).get("_is_runtime_protocol"):
            return _anything  # a structural type: whatever the registry built
        if hint is type or (
            not issubclass(hint, enum.Enum) and issubclass(hint, collections.abc.Callable)  # type: ignore[arg-type]
        ):
            return _nothing
        return lambda v: isinstance(v, hint)
    if origin is None:
        return _nothing  # a form this checker does not know: refused rather than trusted
    if origin is tuple:
        if not args or args == ((),):  # tuple[()]: the empty tuple only
            return lambda v: v == () and isinstance(v, tuple)
        if len(args) == 2 and args[1] is Ellipsis:
            item = _checker(args[0])
            return lambda v: isinstance(v, tuple) and all(item(x) for x in v)
        items = tuple(_checker(a) for a in args)
        return lambda v: (
            isinstance(v, tuple)
            and len(v) == len(items)
            and all(c(x) for c, x in zip(items, v, strict=True))
        )
    if origin is collections.abc.Callable or origin is type or not isinstance(origin, type):
        return _nothing
    if not args:
        return lambda v: isinstance(v, origin)
    if issubclass(origin, Mapping):
        if len(args) != 2:
            return _nothing
        key, val = _checker(args[0]), _checker(args[1])
        return lambda v: isinstance(v, origin) and all(key(k) and val(x) for k, x in v.items())
    if issubclass(origin, Iterable):
        item = _checker(args[0])
        if issubclass(origin, str | bytes):
            return lambda v: isinstance(v, origin)
        return lambda v: (
            isinstance(v, origin) and (isinstance(v, str | bytes) or all(item(x) for x in v))
        )
    return lambda v: isinstance(v, origin)


def decode_json(data: bytes, expect: Any, *, limits: Limits = Limits()) -> Any:
    """JSON between nodes that is not one of :mod:`meeple.bus.schema`'s messages (a room
    log's entries, in the log's own format; an edge's store reads), decoded by
    ``msgspec`` into ``expect`` (a ``msgspec.Struct``
    or a type hint it knows: every field checked, unknown ones ignored); a
    :class:`WireError` for bytes over ``limits.max_bytes``, bytes that are not JSON, or
    JSON of another shape."""
    if len(data) > limits.max_bytes:
        raise WireError("size", f"{len(data)} bytes, more than {limits.max_bytes}")
    try:
        return msgspec.json.decode(data, type=expect)
    except msgspec.ValidationError as e:
        raise WireError("type", str(e)[:200]) from None
    except (msgspec.DecodeError, RecursionError, ValueError, TypeError) as e:
        raise WireError("format", str(e)[:200]) from None


_told: set[tuple[str, str]] = set()
# Distinct (subject, fault) pairs logged at most: past them, refusals are not logged.
_MAX_TOLD = 256
_VARYING = re.compile(r"[0-9]|^.{13,}$")


def refused(subject: str, error: WireError) -> None:
    """Log a payload that did not decode, once per subject and kind of fault: the
    subject's varying tokens (a room's uid, a seat's route: any with a digit, or long)
    count as one, so a peer that floods one subject, or every room's, with junk writes
    a line per kind of junk, not per message."""
    tokens = subject.split(".")
    where = ".".join([*tokens[:1], *("*" if _VARYING.search(t) else t for t in tokens[1:])])
    key = (where, error.kind)
    if key in _told or len(_told) >= _MAX_TOLD:
        return
    _told.add(key)
    logger.warning("refused a message on %s: %s (refused quietly from now on)", where, error)
