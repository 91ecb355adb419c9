"""The hosts the web port answers to (issue 30.7): a ``Host`` header not on the list is 400.

Without it a page of any site whose name the attacker points at 127.0.0.1 (DNS
rebinding) is same-origin with this server in the visitor's browser: it could read
the pages and, as its ``Origin`` matched its own ``Host``, open ``/ws``. The list:

- always the names of the machine the server is bound for, **with the bound port**:
  ``localhost``, ``127.0.0.1`` and ``[::1]``; the bound address (``--host``) when it
  is one; when bound to every interface (``0.0.0.0``, ``::``), any IP address literal
  (a rebinding attack needs a name; an address typed in a browser is its own origin);
- ``[web] hosts``: more names, ``name`` (any port: behind a reverse proxy) or
  ``name:port`` (that port only); ``"*"`` turns the check off.

:meth:`HostAllowlist.allows` checks a ``Host`` header; :meth:`~HostAllowlist.allows_origin`
an ``Origin`` (``/ws`` compares a browser's ``Origin`` with this list, not with the
request's ``Host``, which the attacker's page chooses). Starlette's
``TrustedHostMiddleware`` does not fit: it drops the port (an ``Origin`` of another
local port must not pass) and misreads ``[::1]:8000``.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

__all__ = ["MAX_HOST_LENGTH", "WILDCARD_BINDS", "HostAllowlist", "split_host"]

# A DNS name is at most 253 characters; a port adds 6, brackets 2.
MAX_HOST_LENGTH = 270
WILDCARD_BINDS = frozenset({"", "0.0.0.0", "::", "*"})
_LOOPBACK = ("localhost", "127.0.0.1", "::1")
_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}


def split_host(value: str) -> tuple[str, int | None] | None:
    """``("name", port)`` of a ``Host`` value (port None when it has none; the name
    lowercased, an IPv6 address without its brackets); None when malformed."""
    if not value or len(value) > MAX_HOST_LENGTH or not value.isascii():
        return None
    value = value.lower()
    port_text = ""
    if value.startswith("["):
        name, bracket, rest = value[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            return None
        port_text = rest[1:] if rest else ""
        try:
            ipaddress.IPv6Address(name)
        except ValueError:
            return None
        if rest and not port_text:
            return None
    else:
        name, colon, port_text = value.partition(":")
        if colon and not port_text:
            return None
        if not name or not all(c.isalnum() or c in "-._" for c in name):
            return None
    if port_text:
        if not port_text.isdigit() or len(port_text) > 5 or int(port_text) > 65535:
            return None
        return name, int(port_text)
    return name, None


class HostAllowlist:
    """The ``Host`` values a web app answers to; see the module docstring.

    ``bound``: the address the listener is bound to (``ServerConfig.host``);
    ``extra``: ``[web] hosts``. The bound *port* is given with each check (it is known
    only once the socket is bound: ``scope["server"]``)."""

    def __init__(self, bound: str, extra: Iterable[str] = ()) -> None:
        bound = bound.strip("[]").lower()
        self.any_address = bound in WILDCARD_BINDS
        self.anything = False
        own = set(_LOOPBACK)
        if not self.any_address:
            own.add(bound)
        self._own = frozenset(own)
        names: set[str] = set()
        pairs: set[tuple[str, int]] = set()
        for entry in extra:
            if entry == "*":
                self.anything = True
                continue
            split = split_host(entry)
            if split is None:
                raise ValueError(f"{entry!r} is no host name (name or name:port)")
            name, port = split
            if port is None:
                names.add(name)
            else:
                pairs.add((name, port))
        self._names = frozenset(names)
        self._pairs = frozenset(pairs)

    def allows(
        self, host: str | None, bound_port: int | None, scheme: str = "http", *, star: bool = True
    ) -> bool:
        """Whether a request with ``Host: host`` to the listener on ``bound_port`` (None:
        unknown, any) is for this server (``star``: a ``"*"`` entry lets any in)."""
        if self.anything and star:
            return True
        if host is None:
            return False
        split = split_host(host)
        if split is None:
            return False
        name, port = split
        if port is None:
            port = _DEFAULT_PORTS.get(scheme, 80)
        if name in self._names or (name, port) in self._pairs:
            return True
        if bound_port is not None and port != bound_port:
            return False
        if name in self._own:
            return True
        if self.any_address:
            try:
                ipaddress.ip_address(name)
            except ValueError:
                return False
            return True
        return False

    def allows_origin(self, origin: str, bound_port: int | None) -> bool:
        """Whether a browser's ``Origin`` (``scheme://host[:port]``) is one of the listed
        hosts (a ``"*"`` entry does not let every origin in)."""
        scheme, sep, rest = origin.partition("://")
        if not sep or scheme not in ("http", "https") or "/" in rest or "@" in rest:
            return False
        return self.allows(rest, bound_port, scheme, star=False)
