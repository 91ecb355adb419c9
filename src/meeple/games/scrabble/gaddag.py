"""A GADDAG in one flat ``uint32`` array: what move generation walks, and its on-disk form.

A GADDAG (Gordon, "A faster Scrabble move generation algorithm", 1994) holds, for
every word ``w`` of ``n`` letters and every split ``1 <= i <= n``, the string
``reverse(w[:i]) + SEP + w[i:]``; for ``i == n`` the separator is left out. A move
generator starts on an anchor square, walks left through the reversed prefix, crosses
the separator and walks right through the rest, so every word through the anchor is
found without guessing where it starts.

The automaton is minimised (Daciuk et al., "Incremental construction of minimal
acyclic finite-state automata", 2000, sorted-input variant) and stored as ONE flat
array of unsigned 32-bit integers, :attr:`Gaddag.flat`. A node is an offset into it:

- ``flat[node]`` is the node's mask: bit ``i`` (0–25, A–Z) or bit 26 (:data:`SEP`)
  set when the node has an arc for that symbol, bit 27 (:data:`FINAL_BIT`) set when a
  string ends here;
- ``flat[node + 1 + k]`` is the node the ``k``-th arc (in symbol order) leads to.

The child for symbol ``s`` is ``flat[node + 1 + popcount(mask & (bit - 1))]`` with
``bit = 1 << s``: one mask read and one read next to it, no per-node objects. The
compiled core (``_movegen.c``) reads the same array straight from the memory-mapped
cache file; the pure-Python generator uses :attr:`Gaddag.nodes`, the same numbers
as a list (indexing a list returns a cached int without boxing).

:meth:`Gaddag.to_bytes` / :meth:`Gaddag.from_bytes` give the on-disk form: a 40-byte
header, the array (little-endian), an optional opaque payload (the lexicon keeps its
word list there) and a BLAKE2 digest of everything before it. ``from_bytes`` refuses a
corrupt or truncated buffer and, given a memory map, copies nothing.
"""

from __future__ import annotations

import hashlib
import struct
import sys
from array import array
from collections.abc import Iterable, Sequence

__all__ = [
    "FINAL_BIT",
    "FORMAT_VERSION",
    "LETTER_BITS",
    "SEP",
    "SEP_BIT",
    "Gaddag",
    "build_gaddag",
    "walk",
]

SEP = 26
SEP_BIT = 1 << SEP
FINAL_BIT = 1 << 27
LETTER_BITS = (1 << 26) - 1
_ARC_BITS = LETTER_BITS | SEP_BIT

# Bump when the serialised layout or the meaning of the array changes: the lexicon
# cache is keyed by it, so old cache files are simply not found again.
FORMAT_VERSION = 3

_MAGIC = b"MEEPLE-GADDAG\x00\x00\x00"
# magic, version, nodes, array length (uint32 words), root, payload bytes, reserved
_HEADER = struct.Struct("<16sIIIIII")
_DIGEST_SIZE = 32
_ORD_A = ord("A")
_SEP_CHAR = chr(_ORD_A + SEP)  # "[" sorts right after "Z"


def walk(nodes: Sequence[int], node: int, symbols: Iterable[int]) -> int:
    """The node of the flat automaton ``nodes`` (:attr:`Gaddag.flat`, or
    :attr:`Gaddag.nodes` where speed matters) reached from ``node`` over every symbol in
    turn, or -1 if the path breaks."""
    for symbol in symbols:
        bit = 1 << symbol
        mask = nodes[node]
        if not mask & bit:
            return -1
        node = nodes[node + 1 + (mask & (bit - 1)).bit_count()]
    return int(node)


class Gaddag:
    """A minimised GADDAG over A–Z with a separator; see the module docstring for layout.

    ``flat`` is any sequence of ints (an ``array('I')``, or a ``memoryview`` cast to
    ``'I'`` over a memory-mapped file); ``payload`` is the opaque bytes stored with it.
    """

    __slots__ = ("_nodes", "flat", "node_count", "payload", "root")

    def __init__(
        self,
        flat: array[int] | memoryview,
        root: int,
        node_count: int,
        payload: bytes | memoryview = b"",
    ) -> None:
        self.flat = flat
        self.root = root
        self.node_count = node_count
        self.payload = payload
        self._nodes: list[int] | None = None

    @property
    def nodes(self) -> list[int]:
        """The flat array as a Python list (built on first use, for the Python generator)."""
        if self._nodes is None:
            self._nodes = self.flat.tolist()
        return self._nodes

    def child(self, node: int, symbol: int) -> int:
        """The node reached from ``node`` over ``symbol`` (0–25 or :data:`SEP`), or -1."""
        flat = self.flat
        bit = 1 << symbol
        mask = flat[node]
        if not mask & bit:
            return -1
        return int(flat[node + 1 + (mask & (bit - 1)).bit_count()])

    def walk(self, node: int, symbols: Iterable[int]) -> int:
        """The node reached from ``node`` over every symbol in turn, or -1 if the path breaks."""
        return walk(self.flat, node, symbols)

    def is_final(self, node: int) -> bool:
        return node >= 0 and bool(self.flat[node] & FINAL_BIT)

    def contains_word(self, word: str) -> bool:
        """Whether ``word`` (upper-case A–Z) is in the automaton, read as its reversal."""
        if not (word.isascii() and word.isalpha() and word.isupper()):
            return False
        return self.is_final(self.walk(self.root, [ord(c) - _ORD_A for c in reversed(word)]))

    def to_bytes(self, payload: bytes | None = None) -> bytes:
        """The on-disk form, with ``payload`` (default: this GADDAG's) after the array."""
        extra = bytes(self.payload) if payload is None else payload
        body = _u32(self.flat).tobytes()
        header = _HEADER.pack(
            _MAGIC, FORMAT_VERSION, self.node_count, len(self.flat), self.root, len(extra), 0
        )
        digest = hashlib.blake2b(header + body + extra, digest_size=_DIGEST_SIZE).digest()
        return header + body + extra + digest

    @classmethod
    def from_bytes(cls, data: bytes | memoryview | bytearray, *, verify: bool = True) -> Gaddag:
        """Read :meth:`to_bytes` output; raise ValueError if it is corrupt, truncated or stale.

        ``verify=False`` skips the digest (header, version and exact size are still
        checked): for a file written whole and renamed into place, where hashing every
        byte would cost more than the rest of the load.

        Given a memoryview over a memory map, the array and payload are views into it
        (nothing is copied); the caller keeps the map open as long as the GADDAG lives.
        """
        view = memoryview(data).cast("B")
        if len(view) < _HEADER.size + _DIGEST_SIZE:
            raise ValueError("GADDAG data truncated")
        magic, version, nodes, length, root, extra, _ = _HEADER.unpack_from(view)
        if magic != _MAGIC:
            raise ValueError("not GADDAG data")
        if version != FORMAT_VERSION:
            raise ValueError(f"GADDAG format {version}, expected {FORMAT_VERSION}")
        expected = _HEADER.size + 4 * length + extra + _DIGEST_SIZE
        if len(view) != expected:
            raise ValueError(f"GADDAG data is {len(view)} bytes, expected {expected}")
        if verify:
            digest = hashlib.blake2b(view[:-_DIGEST_SIZE], digest_size=_DIGEST_SIZE).digest()
            if digest != view[-_DIGEST_SIZE:]:
                raise ValueError("GADDAG data corrupt (digest mismatch)")
        if not 0 <= root < max(length, 1):
            raise ValueError("GADDAG root out of range")
        start = _HEADER.size
        raw = view[start : start + 4 * length]
        flat: array[int] | memoryview
        if sys.byteorder == "little":
            flat = raw.cast("I")
        else:  # pragma: no cover - the file is little-endian
            flat = array("I", raw.tobytes())
            flat.byteswap()
        payload = view[start + 4 * length : start + 4 * length + extra]
        return cls(flat, root, nodes, payload)


def _u32(values: Iterable[int]) -> array[int]:
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


def build_gaddag(words: Iterable[str], payload: bytes = b"") -> Gaddag:
    """Compile upper-case A–Z words into a minimised :class:`Gaddag`.

    Cost grows with the sum of squared word lengths: about ten seconds for a 100,000-word
    list in CPython, which is why the lexicon caches the result on disk.
    """
    strings = _gaddag_strings(set(words))
    # Nodes are registered bottom-up: a node's identity is (final, its arcs), so equal
    # right-languages share one node. `register` maps that signature to the node's
    # offset in the flat array, which is known at once because children come first.
    register: dict[tuple[bool, tuple[int, ...]], int] = {}
    flat: list[int] = []

    def freeze(arcs: list[int], final: bool) -> int:
        sig = (final, tuple(arcs))
        node = register.get(sig)
        if node is None:
            node = len(flat)
            register[sig] = node
            mask = FINAL_BIT if final else 0
            # Arcs were appended in sorted symbol order, which is the popcount rank order.
            for k in range(0, len(arcs), 2):
                mask |= 1 << arcs[k]
            flat.append(mask)
            flat.extend(arcs[1::2])
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
    return Gaddag(array("I", flat), root, len(register), payload)
