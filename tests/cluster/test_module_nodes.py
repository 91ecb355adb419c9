"""The nodes a module's tests share (tests/cluster/conftest.py ``ModuleNodes``, issue
33.3): started by the first test that asks, the same process for every later ask, never
counted as that test's leak, and an ask for other roles under the same name refused."""

from __future__ import annotations

import pytest
from tests.cluster.conftest import ModuleNodes
from tests.guard import SESSION_PIDS

pytestmark = pytest.mark.slow


async def test_a_module_node_starts_once_and_belongs_to_the_module(
    module_nodes: ModuleNodes,
) -> None:
    first = await module_nodes.node("solo", "edge", "--api-port", "0")
    assert first.pid in SESSION_PIDS  # not this test's leak
    assert await module_nodes.node("solo", "edge", "--api-port", "0") is first
    with pytest.raises(AssertionError, match="was started as"):
        await module_nodes.node("solo", "rooms")
    assert first.listeners["api"] > 0
