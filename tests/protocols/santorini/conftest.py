"""Fixtures for the AM27 protocol tests: the group's reference transcript, parsed."""

from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

# A copy of /work/shared/transcripts/santorini-am27-reference-2p.log (the AM27 group's
# Java server with two Python bots), kept with the tests so they run anywhere.
TRANSCRIPT = Path(__file__).with_name("data") / "santorini-am27-reference-2p.log"


@dataclass(frozen=True)
class Chunk:
    """One logged write: connection, direction (True: client to server) and bytes."""

    connection: int
    outgoing: bool
    data: bytes


def read_transcript(path: Path = TRANSCRIPT) -> list[Chunk]:
    chunks = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        parts = raw.split(" ", 3)
        if len(parts) == 4 and parts[2] in ("C>S", "S>C"):
            data = ast.literal_eval(parts[3])
            chunks.append(Chunk(int(parts[1]), parts[2] == "C>S", data))
    return chunks


@pytest.fixture(scope="session")
def transcript() -> list[Chunk]:
    return read_transcript()


@pytest.fixture(scope="session")
def server_streams(transcript: list[Chunk]) -> dict[int, bytes]:
    """Everything the server wrote to each connection, concatenated."""
    streams: dict[int, bytes] = defaultdict(bytes)
    for chunk in transcript:
        if not chunk.outgoing:
            streams[chunk.connection] += chunk.data
    return dict(streams)
