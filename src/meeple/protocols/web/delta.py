"""What changed between two snapshots of a topic, as a JSON Patch, sans-I/O.

A spectator that subscribed with ``"delta": true`` gets a topic's whole snapshot once
(on joining, and whenever it fell behind), then only what changed from one snapshot to
the next (docs/protocols/web.md, "Deltas"). A change is a list of RFC 6902 operations
restricted to three: ``add`` (a key, or ``-``: append to a list), ``remove`` and
``replace``, each at an RFC 6901 pointer into the snapshot. The whole snapshot is the
answer whenever the patch would not be smaller.

- :func:`diff` makes the patch from the older snapshot to the newer one;
- :func:`apply_patch` applies one (as the browser's ``follow`` does, in
  ``web/static/js/delta.js``); it raises :class:`PatchError` for a patch that does not
  fit the document.
"""

from __future__ import annotations

import copy
import json
from typing import Any

__all__ = ["PatchError", "apply_patch", "diff", "pointer"]

Op = dict[str, Any]


class PatchError(ValueError):
    """A patch that does not apply to the document (a wrong base, a bad pointer)."""


def _size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False))


def _same(a: Any, b: Any) -> bool:
    # JSON tells true from 1 and 1.0 from 1; Python's == does not (== first: it is fast).
    if type(a) is not type(b) or a != b:
        return False
    if isinstance(a, dict):
        return all(_same(value, b[key]) for key, value in a.items())
    if isinstance(a, list):
        return all(_same(x, y) for x, y in zip(a, b, strict=True))
    return True


def pointer(*parts: str | int) -> str:
    """The RFC 6901 pointer to ``parts`` (``~`` and ``/`` in keys escaped, §3)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def diff(old: Any, new: Any) -> list[Op] | None:
    """The operations that turn ``old`` into ``new``; None when only replacing the whole
    document would do (their types differ, or the patch is no smaller than ``new``)."""
    if _same(old, new):
        return []
    if not (isinstance(old, dict) and isinstance(new, dict)) and not (
        isinstance(old, list) and isinstance(new, list)
    ):
        return None
    ops: list[Op] = []
    _diff(old, new, "", ops)
    return ops if _size(ops) < _size(new) else None


def _diff(old: Any, new: Any, path: str, ops: list[Op]) -> None:
    """Append to ``ops`` what turns ``old`` into ``new`` at ``path`` (they differ)."""
    mine: list[Op] = []
    if isinstance(old, dict) and isinstance(new, dict):
        for key in old:
            if key not in new:
                mine.append({"op": "remove", "path": path + pointer(key)})
        for key, value in new.items():
            if key not in old:
                mine.append({"op": "add", "path": path + pointer(key), "value": value})
            elif not _same(old[key], value):
                _diff(old[key], value, path + pointer(key), mine)
    elif isinstance(old, list) and isinstance(new, list):
        common = min(len(old), len(new))
        for i in range(common):
            if not _same(old[i], new[i]):
                _diff(old[i], new[i], path + pointer(i), mine)
        # Removed from the end backwards, so every index stays right (RFC 6902 §4.2).
        for i in range(len(old) - 1, common - 1, -1):
            mine.append({"op": "remove", "path": path + pointer(i)})
        for value in new[common:]:
            mine.append({"op": "add", "path": path + "/-", "value": value})
    else:
        ops.append({"op": "replace", "path": path, "value": new})
        return
    # A container changed in many places costs more as ops than as its new value.
    replace = {"op": "replace", "path": path, "value": new}
    if path and len(mine) > 1 and _size(mine) > _size(replace):
        ops.append(replace)
    else:
        ops.extend(mine)


def apply_patch(document: Any, ops: Any) -> Any:
    """``document`` with ``ops`` applied, as a new value (``document`` is not changed)."""
    if not isinstance(ops, list):
        raise PatchError("a patch is a list of operations")
    doc = copy.deepcopy(document)
    for op in ops:
        if not isinstance(op, dict) or not isinstance(op.get("path"), str):
            raise PatchError("an operation is an object with a path")
        kind, path = op.get("op"), op["path"]
        if path == "":
            if kind != "replace":
                raise PatchError(f"{kind} at the root")
            doc = copy.deepcopy(op.get("value"))
            continue
        parent, key = _parent(doc, path)
        if kind == "remove":
            _remove(parent, key, path)
        elif kind in ("add", "replace") and "value" in op:
            _put(parent, key, copy.deepcopy(op["value"]), path, add=kind == "add")
        else:
            raise PatchError(f"not an operation: {kind}")
    return doc


def _tokens(path: str) -> list[str]:
    if not path.startswith("/"):
        raise PatchError(f"a pointer starts with /: {path!r}")
    return [t.replace("~1", "/").replace("~0", "~") for t in path[1:].split("/")]


def _index(container: list[Any], token: str, path: str, *, end: bool = False) -> int:
    if not token.isdigit() or (token != "0" and token.startswith("0")):
        raise PatchError(f"not a list index: {path}")
    i = int(token)
    if i > len(container) or (i == len(container) and not end):
        raise PatchError(f"index out of range: {path}")
    return i


def _parent(doc: Any, path: str) -> tuple[Any, str]:
    *parents, last = _tokens(path)
    node = doc
    for token in parents:
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list):
            node = node[_index(node, token, path)]
        else:
            raise PatchError(f"no such place: {path}")
    if not isinstance(node, dict | list):
        raise PatchError(f"no such place: {path}")
    return node, last


def _remove(parent: Any, key: str, path: str) -> None:
    if isinstance(parent, dict):
        if key not in parent:
            raise PatchError(f"nothing to remove at {path}")
        del parent[key]
    else:
        del parent[_index(parent, key, path)]


def _put(parent: Any, key: str, value: Any, path: str, *, add: bool) -> None:
    if isinstance(parent, dict):
        if not add and key not in parent:
            raise PatchError(f"nothing to replace at {path}")
        parent[key] = value
    elif add and key == "-":
        parent.append(value)
    elif add:
        parent.insert(_index(parent, key, path, end=True), value)
    else:
        parent[_index(parent, key, path)] = value
