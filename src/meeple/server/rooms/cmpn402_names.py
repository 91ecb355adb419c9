"""Agents' secrets: what binds a CMPN402 team name to its team (docs/protocols/cmpn402.md,
"What protects a seat").

The spec's NAME carries a team name and nothing else, so by itself a name is all a
referee knows of an agent: whoever sends ``alpha`` is alpha. An organiser who wants more
gives the referee a *secrets file*, one line per team::

    alpha#Jq3v9xT2mB0sLw8Z
    bravo#c4Nf7PzK1rYe6HdQ

and each team configures its agent's name as its whole line. The agent sends that text
as its NAME, as the spec has it (``00`` + the UTF-8 text), so an agent written against
the spec needs no change, only a longer name. The referee splits the NAME at its last
``#``: the part before is the team name, shown, logged, stored and rated; the part after
is checked against the file in constant time and forgotten. A NAME that is not a line
of the file — no ``#``, a name the file does not list, a wrong secret — is refused as
the spec's bad NAME is: the connection is closed with 1008 (policy violation).

The whole line is a NAME, so it obeys NAME's limits (1–64 bytes of printable UTF-8,
``MAX_NAME_BYTES``); a secret is at least :data:`MIN_SECRET` characters and has no
``#`` (the team name may). ``meeple cmpn402 secrets NAME…`` writes such a file.

The file is read when the listener starts (a bad file stops the start with a message
naming the line); without one, names are not checked (``None`` in the callers).
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from meeple.protocols.cmpn402.errors import RemoteProtocolError
from meeple.protocols.cmpn402.messages import MAX_NAME_BYTES, Name, decode_client

__all__ = [
    "MAX_SECRETS_BYTES",
    "MIN_SECRET",
    "SEPARATOR",
    "AgentSecrets",
    "SecretsError",
    "load_secrets",
    "new_secret",
]

SEPARATOR = "#"
# Characters of a secret at least (a generated one has 22: 128 random bits).
MIN_SECRET = 8
# The file's size at most: 1024 agents (the contest's connection limit) of 64 bytes each,
# and room to spare.
MAX_SECRETS_BYTES = 256 * 1024


class SecretsError(ValueError):
    """The secrets file cannot be used; ``str()`` names the file and line."""


def new_secret() -> str:
    """A fresh secret: 22 URL-safe characters (128 random bits), never a ``#``."""
    return secrets.token_urlsafe(16)


@dataclass(frozen=True, slots=True)
class AgentSecrets:
    """Team name -> secret, from the organiser's file; :meth:`check` a NAME against it."""

    by_name: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str, source: str = "the secrets") -> AgentSecrets:
        """The lines ``name#secret`` of ``text`` (blank lines skipped); SecretsError."""
        found: dict[str, str] = {}
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            where = f"{source}, line {number}"
            try:
                decoded = decode_client(b"\x00" + line.encode("utf-8"))
            except RemoteProtocolError as e:
                raise SecretsError(f"{where}: not a NAME an agent can send ({e.reason})") from None
            assert isinstance(decoded, Name)
            name, sep, secret = decoded.name.rpartition(SEPARATOR)
            if not sep or not name or name != name.strip():
                raise SecretsError(
                    f"{where}: not name{SEPARATOR}secret (no spaces around the name)"
                )
            if len(secret) < MIN_SECRET:
                raise SecretsError(f"{where}: the secret is shorter than {MIN_SECRET} characters")
            if name in found:
                raise SecretsError(f"{where}: {name!r} is listed twice")
            found[name] = secret
        if not found:
            raise SecretsError(f"{source}: no name{SEPARATOR}secret line")
        return cls(found)

    @classmethod
    def load(cls, path: str | Path) -> AgentSecrets:
        """The secrets file at ``path`` (at most :data:`MAX_SECRETS_BYTES`); SecretsError."""
        try:
            with open(path, "rb") as f:
                data = f.read(MAX_SECRETS_BYTES + 1)
        except OSError as e:
            raise SecretsError(f"cannot read the secrets file {path}: {e.strerror}") from None
        if len(data) > MAX_SECRETS_BYTES:
            raise SecretsError(f"{path}: larger than {MAX_SECRETS_BYTES} bytes")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise SecretsError(f"{path}: not UTF-8") from None
        return cls.parse(text, str(path))

    @classmethod
    def generate(cls, names: Iterable[str]) -> AgentSecrets:
        """A fresh secret for each of ``names``; SecretsError for a name no agent can send
        with a secret (too long, unprintable) or given twice."""
        lines = [f"{name}{SEPARATOR}{new_secret()}" for name in names]
        return cls.parse("\n".join(lines), "the names")

    @property
    def names(self) -> frozenset[str]:
        return frozenset(self.by_name)

    def lines(self) -> str:
        """The file's text: one ``name#secret`` line per agent."""
        return "".join(f"{n}{SEPARATOR}{s}\n" for n, s in self.by_name.items())

    def check(self, sent: str) -> str | None:
        """The team name of a NAME the file lists with its right secret, else None."""
        name, sep, secret = sent.rpartition(SEPARATOR)
        expected = self.by_name.get(name) if sep else None
        # Compared whatever the name, so the time taken does not say whether it is listed.
        right = hmac.compare_digest(
            secret.encode("utf-8"), (expected or "\x00" * MAX_NAME_BYTES).encode("utf-8")
        )
        return name if right and expected is not None else None


def load_secrets(path: str | Path | None) -> AgentSecrets | None:
    """The configured secrets file (``[cmpn402] agent_secrets``), or None without one."""
    return None if path is None else AgentSecrets.load(path)
