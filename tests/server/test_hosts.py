"""The web's Host allowlist (issue 30.7, meeple.server.edge.hosts): what it admits."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meeple.server.config import ConfigError, WebConfig
from meeple.server.edge.hosts import MAX_HOST_LENGTH, HostAllowlist, split_host


def test_the_defaults_are_the_loopback_names_with_the_bound_port() -> None:
    """Bound to 127.0.0.1:8000: localhost, 127.0.0.1, [::1] on 8000 only."""
    hosts = HostAllowlist("127.0.0.1")
    for ok in ("localhost:8000", "127.0.0.1:8000", "[::1]:8000", "LocalHost:8000"):
        assert hosts.allows(ok, 8000), ok
    for bad in ("localhost:8001", "localhost", "evil.example:8000", "10.0.0.1:8000", None, ""):
        assert not hosts.allows(bad, 8000), bad
    assert hosts.allows("localhost", 80)  # no port: the scheme's
    assert hosts.allows("localhost", 443, "https")


def test_a_wildcard_bind_admits_address_literals_not_names() -> None:
    """Bound to 0.0.0.0: any IP literal with the port (a rebinding page needs a name)."""
    hosts = HostAllowlist("0.0.0.0")
    assert hosts.allows("192.168.1.20:8000", 8000)
    assert hosts.allows("[2001:db8::1]:8000", 8000)
    assert not hosts.allows("192.168.1.20:8001", 8000)
    assert not hosts.allows("meeple.lan:8000", 8000)
    assert HostAllowlist("meeple.lan").allows("meeple.lan:8000", 8000)


def test_configured_names_with_and_without_a_port() -> None:
    hosts = HostAllowlist("127.0.0.1", ["meeple.example", "games.example:8443"])
    assert hosts.allows("meeple.example", 8000)
    assert hosts.allows("meeple.example:1234", 8000)
    assert hosts.allows("games.example:8443", 8000)
    assert not hosts.allows("games.example", 8000, "https")
    assert hosts.allows_origin("https://meeple.example", 8000)
    assert not hosts.allows_origin("https://evil.example", 8000)
    assert not hosts.allows_origin("http://localhost:8001", 8000)
    assert not hosts.allows_origin("null", 8000)
    star = HostAllowlist("127.0.0.1", ["*"])
    assert star.allows("anything.example", 8000)
    assert not star.allows_origin("http://anything.example", 8000)  # "*" is not any Origin


def test_config_refuses_a_malformed_host() -> None:
    WebConfig(hosts=("meeple.example", "x.example:8443", "*")).validate()
    for bad in ("http://meeple.example", "a b", "x:99999", "[::1", "x:"):
        with pytest.raises(ConfigError):
            WebConfig(hosts=(bad,)).validate()


@given(st.text(max_size=MAX_HOST_LENGTH + 20))
def test_split_host_never_raises(value: str) -> None:
    """Any text: None or a lowercase name with a port in range; a valid split admitted by
    a list made of it."""
    split = split_host(value)
    if split is None:
        return
    name, port = split
    assert name == name.lower()
    assert port is None or 0 <= port <= 65535
    if ":" not in name:
        assert HostAllowlist("127.0.0.1", [value]).allows(value, 1)
