"""Shared by the engines' record tests: random damage to a record."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import strategies as st

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=10,
)


def _mutate(record: Any, data: st.DataObject) -> Any:
    """Replace, drop or add one value somewhere in the record."""
    node = record
    while isinstance(node, dict | list):
        keys = list(node.keys()) if isinstance(node, dict) else list(range(len(node)))
        if not keys:
            return record
        key = data.draw(st.sampled_from(keys))
        child = node[key]
        if isinstance(child, dict | list) and child and data.draw(st.booleans()):
            node = child
            continue
        how = data.draw(st.sampled_from(["replace", "drop", "small-int"]))
        if how == "drop":
            del node[key]
        elif how == "small-int":
            node[key] = data.draw(st.integers(-2, 40))
        else:
            node[key] = data.draw(JSON)
        return record
    return record


def mutate_record(record: dict[str, Any], data: st.DataObject) -> Any:
    """A deep copy of ``record`` with one to three random changes, often in an action."""
    record = copy.deepcopy(record)
    for _ in range(data.draw(st.integers(1, 3))):
        where = data.draw(st.sampled_from(["anywhere", "action", "setup"]))
        actions = record.get("actions") if isinstance(record, dict) else None
        if where == "action" and isinstance(actions, list) and actions:
            _mutate(data.draw(st.sampled_from(actions)), data)
        elif (
            where == "setup" and isinstance(record, dict) and isinstance(record.get("setup"), dict)
        ):
            _mutate(record["setup"], data)
        else:
            record = _mutate(record, data)
    return record


@pytest.fixture(scope="session")
def mutate() -> Callable[[dict[str, Any], st.DataObject], Any]:
    return mutate_record
