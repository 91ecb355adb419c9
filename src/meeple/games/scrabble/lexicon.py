"""Lexicons: the words a game accepts, with the GADDAG move generation walks.

Call :func:`load_lexicon` with a registered name (:data:`LEXICONS`; ``"wordnik"``, the
MIT-licensed Wordnik word list for word games shipped in this package, is the default;
``"enable"``, the public-domain ENABLE list, ships too) or the
path of a word list, then ask ``word in lexicon`` to validate a play or
pass the lexicon to :func:`meeple.games.scrabble.movegen.legal_moves`.

Compiling a GADDAG takes seconds, so :func:`load_lexicon` keeps the compiled form in a
cache directory (``MEEPLE_CACHE_DIR``, else ``~/.cache/meeple``), one file per word
list keyed by the source file's path, size and mtime (no re-parse) and the format;
a cached load memory-maps that file and parses nothing. A cache
file that is truncated or corrupt is rebuilt, and a cache directory that cannot be
written only costs the compile time.

Everything here is pure except :func:`load_lexicon` (and the helpers it names), which
reads files and the environment; nothing reads the clock.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import lzma
import mmap
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from importlib import resources
from pathlib import Path
from types import MappingProxyType

from meeple.games.scrabble.gaddag import FORMAT_VERSION, Gaddag, build_gaddag

__all__ = [
    "DEFAULT_LEXICON",
    "ENABLE_SHA256",
    "LEXICONS",
    "MAX_WORD_LENGTH",
    "MIN_WORD_LENGTH",
    "WORDNIK_SHA256",
    "Lexicon",
    "LexiconError",
    "default_cache_dir",
    "load_lexicon",
    "normalize_words",
    "parse_word_list",
]

logger = logging.getLogger(__name__)

MIN_WORD_LENGTH = 2
MAX_WORD_LENGTH = 15
DEFAULT_LEXICON = "wordnik"

_WORD = re.compile(r"[A-Za-z]+")


class LexiconError(Exception):
    """A lexicon that cannot be found or read (unknown name, missing or unreadable file)."""


def normalize_words(words: Iterable[str]) -> list[str]:
    """The playable words among ``words``: ASCII letters only, 2–15 long, upper-cased, sorted.

    Entries with anything but A–Z (hyphens, spaces, apostrophes, accents) are dropped
    rather than glued together: "aaron's rod" is not the word AARONSROD.
    """
    keep = set()
    for raw in words:
        w = raw.strip()
        if MIN_WORD_LENGTH <= len(w) <= MAX_WORD_LENGTH and _WORD.fullmatch(w):
            keep.add(w.upper())
    return sorted(keep)


def parse_word_list(text: str) -> list[str]:
    """Words from a word-list file: one per line, ``#`` comments and blank lines ignored.

    Case and surrounding whitespace do not matter; a line whose word has other than
    A–Z letters is skipped (see :func:`normalize_words`).
    """
    return normalize_words(line.split("#", 1)[0] for line in text.splitlines())


class Lexicon:
    """A set of words (upper-case A–Z, 2–15 letters) with its compiled GADDAG.

    ``word in lexicon`` checks the word (upper case expected); ``lexicon.gaddag`` is
    what move generation walks. Build one with :meth:`from_words` (compiles) or
    :func:`load_lexicon` (compiles once, then maps the cache file). ``words`` is a
    frozenset built on first use from the word list stored with the GADDAG, so a
    cached load reads no more than it must.
    """

    __slots__ = ("_blob", "_words", "gaddag", "name")

    def __init__(
        self,
        name: str,
        words: Iterable[str] | None,
        gaddag: Gaddag,
        *,
        blob: bytes | memoryview | None = None,
    ) -> None:
        self.name = name
        self.gaddag = gaddag
        self._words: frozenset[str] | None = None if words is None else frozenset(words)
        self._blob = blob
        if words is None and blob is None:
            raise ValueError("a Lexicon needs its words or the stored word list")

    @classmethod
    def from_words(cls, words: Iterable[str], name: str = "custom") -> Lexicon:
        """Normalise ``words`` and compile them; no cache, no I/O."""
        normal = normalize_words(words)
        return cls(name, normal, build_gaddag(normal))

    @property
    def words(self) -> frozenset[str]:
        if self._words is None:
            text = bytes(self._blob or b"").decode("ascii")
            self._words = frozenset(text.split("\n")) if text else frozenset()
        return self._words

    def __contains__(self, word: object) -> bool:
        return word in self.words

    def __len__(self) -> int:
        return len(self.words)

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self.words))

    def __repr__(self) -> str:
        return f"<Lexicon {self.name!r}: {len(self.words)} words>"


def _english_words(source: str) -> Iterable[str]:
    from english_words import get_english_words_set  # type: ignore[import-untyped]

    # Not alpha=True: that strips punctuation and glues multi-word entries together.
    words: set[str] = get_english_words_set([source], lower=False)
    return words


def _gcide_words() -> Iterable[str]:
    return _english_words("gcide")


def _web2_words() -> Iterable[str]:
    return _english_words("web2")


# ENABLE ("Enhanced North American Benchmark LExicon", the ENABLE2K edition, 172,823
# words), a word list made for word games and placed in the public domain by its
# authors; shipped here xz-compressed (docs/scrabble-engine.md, "Lexicons", says why
# this list and not SOWPODS/Collins or NWL).
ENABLE_SHA256 = "3f16130220645692ed49c7134e24a18504c2ca55b3c012f7290e3e77c63b1a89"


def _shipped_file(name: str) -> Path:
    """A word list shipped in ``data/``, xz-compressed ASCII, one word a line."""
    return Path(str(resources.files("meeple.games.scrabble").joinpath("data", name)))


def _shipped_words(name: str) -> Iterable[str]:
    with lzma.open(_shipped_file(name), "rt", encoding="ascii") as f:
        return f.read().split()


_enable_file = functools.partial(_shipped_file, "enable.txt.xz")
_enable_words = functools.partial(_shipped_words, "enable.txt.xz")


# The Wordnik word list (wordlist-20210729.txt of github.com/wordnik/wordlist at commit
# 46e6215, 198,422 words, "an open-source wordlist for game developers"), MIT-licensed
# (data/wordnik-LICENSE.txt ships beside it): the one free list found with the two-letter
# words players use every game (QI, ZA, XU, KI, ...) that ENABLE lacks; shipped
# xz-compressed, its quotes removed (docs/scrabble-engine.md, "Lexicons").
WORDNIK_SHA256 = "a030b80c44c5a7172b2c44f34de0715452e5b8d8cba1e2f5573b0b47108a27b1"


_wordnik_file = functools.partial(_shipped_file, "wordnik.txt.xz")
_wordnik_words = functools.partial(_shipped_words, "wordnik.txt.xz")


# Name -> word source (uvicorn-style registry). A source returns raw entries; they go
# through normalize_words like a file's lines do.
LEXICONS: Mapping[str, Callable[[], Iterable[str]]] = MappingProxyType(
    {
        "enable": _enable_words,
        "wordnik": _wordnik_words,
        "gcide": _gcide_words,
        "web2": _web2_words,
    }
)


def default_cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$MEEPLE_CACHE_DIR`` if set, else ``~/.cache/meeple``."""
    env = os.environ if environ is None else environ
    configured = env.get("MEEPLE_CACHE_DIR")
    if configured:
        return Path(configured)
    return Path.home() / ".cache" / "meeple"


# A word list larger than this is not a word list (the largest in use are ~3 MB).
MAX_SOURCE_BYTES = 64 * 1024 * 1024


def _english_words_file(source: str) -> Path:
    # The data file get_english_words_set reads for (source, no options): its bytes key
    # the cache, so a new package version with other words compiles again.
    return Path(str(resources.files("english_words").joinpath("data", f"{source}.pickle")))


# Name -> the file whose bytes identify the registered source (for the cache key).
_SOURCE_FILES: Mapping[str, Callable[[], Path]] = MappingProxyType(
    {
        "enable": _enable_file,
        "wordnik": _wordnik_file,
        "gcide": lambda: _english_words_file("gcide"),
        "web2": lambda: _english_words_file("web2"),
    }
)


def _cache_key(kind: str, stamp: str) -> str:
    """Hash of what kind of source it is, its identity stamp and the format versions."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"meeple-lexicon-v{_CACHE_VERSION}-gaddag-v{FORMAT_VERSION}\n".encode())
    digest.update(f"{kind}\n{stamp}".encode())
    return digest.hexdigest()


# Bump when normalize_words or the payload layout changes.
_CACHE_VERSION = 2


def _stamp(path: Path) -> str:
    """A file's identity for the cache key: resolved path, size and modification time.

    Reading and hashing the words to make the key cost more than loading the cached
    GADDAG, so the key does not depend on them: an edit that keeps the size and the
    mtime to the nanosecond would not be noticed (``use_cache=False`` rebuilds).
    """
    st = path.stat()
    return f"{path.resolve()}\0{st.st_size}\0{st.st_mtime_ns}"


def _source(name_or_path: str | os.PathLike[str]) -> tuple[str, str, str]:
    """(display name, kind, stamp) for a registered name or a word-list path.

    ``kind`` is ``"name:gcide"`` for a registered source, ``"file"`` for a path; the
    stamp identifies the data (a registered source's data file, or the word list).
    """
    key = os.fspath(name_or_path)
    if key in LEXICONS:
        locate = _SOURCE_FILES.get(key)
        stamp = ""
        if locate is not None:
            with contextlib.suppress(OSError):
                stamp = _stamp(locate())
        return key, f"name:{key}", stamp
    path = Path(key)
    try:
        if not path.is_file():
            raise FileNotFoundError(f"no such file: {key}")
        stamp = _stamp(path)
    except OSError as exc:
        known = ", ".join(sorted(LEXICONS))
        raise LexiconError(
            f"no lexicon {key!r}: not a known name ({known}) and not a readable file ({exc})"
        ) from exc
    return path.name, "file", stamp


def _read_limited(path: Path) -> bytes:
    with path.open("rb") as f:
        data = f.read(MAX_SOURCE_BYTES + 1)
    if len(data) > MAX_SOURCE_BYTES:
        raise OSError(f"larger than {MAX_SOURCE_BYTES} bytes")
    return data


def _words_of(name_or_path: str | os.PathLike[str], kind: str) -> list[str]:
    if kind != "file":
        return normalize_words(LEXICONS[os.fspath(name_or_path)]())
    try:
        data = _read_limited(Path(name_or_path))
    except OSError as exc:
        where = os.fspath(name_or_path)
        raise LexiconError(f"cannot read the word list {where!r}: {exc}") from exc
    return parse_word_list(data.decode("utf-8", errors="replace"))


def _load_cached(path: Path) -> Gaddag | None:
    """The GADDAG in a cache file, memory-mapped (nothing copied), or None if unusable."""
    try:
        with path.open("rb") as f:
            mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):  # missing, unreadable, or empty (mmap of 0 bytes)
        return None
    try:
        # The file was written whole and renamed into place, so its size (checked)
        # catches truncation; the full digest is checked when it is written, not on
        # every load (it would cost more than the load). The compiled generator
        # checks the graph's structure before it walks it.
        return Gaddag.from_bytes(memoryview(mapped), verify=False)
    except ValueError as exc:
        logger.warning("lexicon cache %s unusable (%s); rebuilding", path, exc)
        return None


def _store_cached(path: Path, gaddag: Gaddag) -> None:
    # Write to a private temporary name, then rename: a reader never sees half a file,
    # and two processes compiling at once both end with a whole one.
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(gaddag.to_bytes())
        os.replace(tmp, path)
    except OSError as exc:
        logger.warning("cannot write lexicon cache %s (%s); continuing without", path, exc)
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)


def load_lexicon(
    name_or_path: str | os.PathLike[str] = DEFAULT_LEXICON,
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    use_cache: bool = True,
) -> Lexicon:
    """Load a lexicon by registered name (:data:`LEXICONS`) or word-list path.

    The compiled GADDAG comes from ``cache_dir`` (default :func:`default_cache_dir`)
    when a valid file for this exact source is there: the key is the source file's
    path, size and mtime (the word-list file, or a registered source's data file),
    so nothing is read or parsed to find it, and the file is memory-mapped.
    Otherwise the words are read, compiled and stored. Raises :class:`LexiconError`
    for an unknown name or unreadable file.
    """
    name, kind, stamp = _source(name_or_path)
    if not use_cache:
        words = _words_of(name_or_path, kind)
        return Lexicon(name, words, build_gaddag(words))
    directory = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:40]
    path = directory / f"{safe}-{_cache_key(kind, stamp)}.gaddag"
    gaddag = _load_cached(path)
    if gaddag is not None:
        return Lexicon(name, None, gaddag, blob=gaddag.payload)
    with _compiling(path):
        # Another process may have compiled it while this one waited for the lock.
        gaddag = _load_cached(path)
        if gaddag is not None:
            return Lexicon(name, None, gaddag, blob=gaddag.payload)
        words = _words_of(name_or_path, kind)
        gaddag = build_gaddag(words, payload="\n".join(words).encode("ascii"))
        _store_cached(path, gaddag)
    return Lexicon(name, words, gaddag)


@contextlib.contextmanager
def _compiling(path: Path) -> Iterator[None]:
    """Hold ``path``'s compile lock (an advisory lock on ``<path>.lock``): processes that
    start together on a fresh machine (a cluster's nodes, test workers) compile a word
    list once, the others waiting to map the result, instead of each spending seconds of
    CPU on the same file. Where no lock can be taken (no fcntl, a read-only cache
    directory) each compiles on its own, as before."""
    try:
        import fcntl
    except ImportError:  # not POSIX
        yield
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = path.with_name(f"{path.name}.lock").open("a")
    except OSError:
        yield
        return
    with lock:
        with contextlib.suppress(OSError):
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        yield  # the lock goes with the file's close
