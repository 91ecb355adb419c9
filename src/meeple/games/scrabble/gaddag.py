"""A GADDAG as flat integer arrays: what move generation walks, and its on-disk form.

A GADDAG (Gordon, "A faster Scrabble move generation algorithm", 1994) holds, for
every word ``w`` of ``n`` letters and every split ``1 <= i <= n``, the string
``reverse(w[:i]) + SEP + w[i:]``; for ``i == n`` the separator is left out. A move
generator starts on an anchor square, walks left through the reversed prefix, crosses
the separator and walks right through the rest, so every word through the anchor is
found without guessing where it starts.

The automaton is minimised (Daciuk et al., "Incremental construction of minimal
acyclic finite-state automata", 2000, sorted-input variant) and stored as three
parallel integer lists, indexed by node:

- ``masks[node]``: bit ``i`` (0–25, A–Z) or bit 26 (:data:`SEP`) set when the node has
  an arc for that symbol; bit 27 (:data:`FINAL_BIT`) set when a string ends here;
- ``bases[node]``: index in ``targets`` of the node's first arc;
- ``targets[bases[node] + k]``: the node the node's ``k``-th arc (in symbol order)
  leads to.

The child for symbol ``s`` is ``targets[bases[node] + popcount(masks[node] & (bit - 1))]``
with ``bit = 1 << s``: one mask test and one popcount, no per-node objects. Plain lists
rather than ``array`` because indexing a list returns a cached int without boxing.

:meth:`Gaddag.to_bytes` / :meth:`Gaddag.from_bytes` give a compact form (a header,
three little-endian ``uint32`` arrays and a BLAKE2 digest) that loads in milliseconds
and refuses a corrupt or truncated file. :mod:`meeple.games.scrabble.lexicon` caches it.
"""

from __future__ import annotations

import hashlib
import struct
import sys
from array import array
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "FINAL_BIT",
    "FORMAT_VERSION",
    "LETTER_BITS",
    "SEP",
    "SEP_BIT",
    "Gaddag",
    "build_gaddag",
]

SEP = 26
SEP_BIT = 1 << SEP
FINAL_BIT = 1 << 27
LETTER_BITS = (1 << 26) - 1

# Bump when the serialised layout or the meaning of the arrays changes: the lexicon
# cache is keyed by it, so old cache files are simply not found again.
FORMAT_VERSION = 1

_MAGIC = b"MEEPLE-GADDAG\x00\x00\x00"
_HEADER = struct.Struct("<16sIIIII")  # magic, version, nodes, arcs, root, reserved
_DIGEST_SIZE = 32
_ORD_A = ord("A")
_SEP_CHAR = chr(_ORD_A + SEP)  # "[" sorts right after "Z"


@dataclass(frozen=True, slots=True, eq=False)
class Gaddag:
    """A minimised GADDAG over A–Z with a separator; see the module docstring for layout."""

    masks: list[int]
    bases: list[int]
    targets: list[int]
    root: int

    @property
    def node_count(self) -> int:
        return len(self.masks)

    def child(self, node: int, symbol: int) -> int:
        """The node reached from ``node`` over ``symbol`` (0–25 or :data:`SEP`), or -1."""
        bit = 1 << symbol
        mask = self.masks[node]
        if not mask & bit:
            return -1
        return self.targets[self.bases[node] + (mask & (bit - 1)).bit_count()]

    def walk(self, node: int, symbols: Iterable[int]) -> int:
        """The node reached from ``node`` over every symbol in turn, or -1 if the path breaks."""
        masks, bases, targets = self.masks, self.bases, self.targets
        for symbol in symbols:
            bit = 1 << symbol
            mask = masks[node]
            if not mask & bit:
                return -1
            node = targets[bases[node] + (mask & (bit - 1)).bit_count()]
        return node

    def is_final(self, node: int) -> bool:
        return node >= 0 and bool(self.masks[node] & FINAL_BIT)

    def contains_word(self, word: str) -> bool:
        """Whether ``word`` (upper-case A–Z) is in the automaton, read as its reversal."""
        return self.is_final(self.walk(self.root, [ord(c) - _ORD_A for c in reversed(word)]))

    def to_bytes(self) -> bytes:
        """The compact serialised form; :meth:`from_bytes` reads it back."""
        payload = b"".join(_u32(a).tobytes() for a in (self.masks, self.bases, self.targets))
        header = _HEADER.pack(
            _MAGIC, FORMAT_VERSION, len(self.masks), len(self.targets), self.root, 0
        )
        digest = hashlib.blake2b(header + payload, digest_size=_DIGEST_SIZE).digest()
        return header + payload + digest

    @classmethod
    def from_bytes(cls, data: bytes) -> Gaddag:
        """Read :meth:`to_bytes` output; raise ValueError if it is corrupt, truncated or stale."""
        if len(data) < _HEADER.size + _DIGEST_SIZE:
            raise ValueError("GADDAG data truncated")
        magic, version, nodes, arcs, root, _ = _HEADER.unpack_from(data)
        if magic != _MAGIC:
            raise ValueError("not GADDAG data")
        if version != FORMAT_VERSION:
            raise ValueError(f"GADDAG format {version}, expected {FORMAT_VERSION}")
        expected = _HEADER.size + 4 * (2 * nodes + arcs) + _DIGEST_SIZE
        if len(data) != expected:
            raise ValueError(f"GADDAG data is {len(data)} bytes, expected {expected}")
        body = memoryview(data)[:-_DIGEST_SIZE]
        digest = hashlib.blake2b(body, digest_size=_DIGEST_SIZE).digest()
        if digest != data[-_DIGEST_SIZE:]:
            raise ValueError("GADDAG data corrupt (digest mismatch)")
        if not 0 <= root < max(nodes, 1):
            raise ValueError("GADDAG root out of range")
        offset = _HEADER.size
        lists = []
        for count in (nodes, nodes, arcs):
            a = array("I")
            a.frombytes(body[offset : offset + 4 * count])
            if sys.byteorder == "big":  # pragma: no cover - the file is little-endian
                a.byteswap()
            lists.append(a.tolist())
            offset += 4 * count
        return cls(lists[0], lists[1], lists[2], root)


def _u32(values: list[int]) -> array[int]:
    a = array("I", values)
    if a.itemsize != 4:  # pragma: no cover - every platform CPython supports has 4
        raise RuntimeError("array('I') is not 32 bits on this platform")
    if sys.byteorder == "big":  # pragma: no cover
        a.byteswap()
    return a


def _gaddag_strings(words: Iterable[str]) -> list[str]:
    """Every GADDAG string of every word, sorted (the order Daciuk's algorithm needs)."""
    out: list[str] = []
    append = out.append
    for word in words:
        rev = word[::-1]
        n = len(word)
        append(rev)
        for i in range(1, n):
            append(rev[n - i :] + _SEP_CHAR + word[i:])
    out.sort()
    return out


def build_gaddag(words: Iterable[str]) -> Gaddag:
    """Compile upper-case A–Z words into a minimised :class:`Gaddag`.

    Cost grows with the sum of squared word lengths: about ten seconds for a 100,000-word
    list in CPython, which is why the lexicon caches the result on disk.
    """
    strings = _gaddag_strings(set(words))
    # Nodes are registered bottom-up: a node's identity is (final, its arcs), so equal
    # right-languages share one node. `register` maps that signature to the node id.
    register: dict[tuple[bool, tuple[int, ...]], int] = {}
    finals: list[bool] = []
    arcs_of: list[tuple[int, ...]] = []  # per node: symbol, child, symbol, child, ...

    def freeze(arcs: list[int], final: bool) -> int:
        sig = (final, tuple(arcs))
        node = register.get(sig)
        if node is None:
            node = len(finals)
            register[sig] = node
            finals.append(final)
            arcs_of.append(sig[1])
        return node

    # The path of the previous string: open (not yet registered) nodes with their arcs.
    path_arcs: list[list[int]] = [[]]
    path_final: list[bool] = [False]
    prev = ""
    for s in strings:
        common = 0
        limit = min(len(s), len(prev))
        while common < limit and s[common] == prev[common]:
            common += 1
        # Everything below the common prefix is finished: register it, deepest first.
        for depth in range(len(prev), common, -1):
            child = freeze(path_arcs.pop(), path_final.pop())
            path_arcs[-1] += (ord(prev[depth - 1]) - _ORD_A, child)
        for _ in range(len(s) - common):
            path_arcs.append([])
            path_final.append(False)
        path_final[-1] = True
        prev = s
    for depth in range(len(prev), 0, -1):
        child = freeze(path_arcs.pop(), path_final.pop())
        path_arcs[-1] += (ord(prev[depth - 1]) - _ORD_A, child)
    root = freeze(path_arcs.pop(), path_final.pop())

    masks: list[int] = []
    bases: list[int] = []
    targets: list[int] = []
    for final, arcs in zip(finals, arcs_of, strict=True):
        mask = FINAL_BIT if final else 0
        bases.append(len(targets))
        # Arcs were appended in sorted symbol order, which is the popcount rank order.
        for k in range(0, len(arcs), 2):
            mask |= 1 << arcs[k]
            targets.append(arcs[k + 1])
        masks.append(mask)
    return Gaddag(masks, bases, targets, root)
