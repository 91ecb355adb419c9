"""Fetch axe-core, the accessibility engine the browser tests run, at the release they pin.

The Python wrapper the tests use (``axe-playwright-python``, on PyPI) bundles axe-core
4.12.1; issue 34 asks for the current release, 4.14, whose rules are stricter (its
``label-content-name-mismatch`` is on by default). axe-core is published only on npm, so
``make test`` fetches its package from the npm registry once, checks it against the
integrity hash pinned here (the registry's own ``dist.integrity``), and keeps its
``axe.min.js`` in the virtual environment (``.venv/share/axe-core/``), where
``tests/web/helpers.py`` reads it. Nothing of it enters the repository.

    python scripts/fetch_axe.py DEST   # DEST: the axe.min.js to write

axe-core is © Deque Systems, under the Mozilla Public License 2.0 (the file keeps its
header).
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path

VERSION = "4.14.1"
URL = f"https://registry.npmjs.org/axe-core/-/axe-core-{VERSION}.tgz"
INTEGRITY = (
    "sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76A"
    "SyFNNtuFooJpZe37OgudVGtQ=="
)
MEMBER = "package/axe.min.js"
MAX_BYTES = 16 * 1024 * 1024  # the package is about 1 MB: anything much bigger is not it


def fetch(url: str = URL, timeout: float = 60.0) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        data: bytes = response.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise SystemExit(f"{url}: more than {MAX_BYTES} bytes")
    return data


def check(data: bytes, integrity: str = INTEGRITY) -> None:
    """The package is the one the registry published under ``integrity`` (SRI sha512)."""
    algorithm, _, expected = integrity.partition("-")
    if algorithm != "sha512":
        raise SystemExit(f"unsupported integrity {integrity!r}")
    got = base64.b64encode(hashlib.sha512(data).digest()).decode()
    if got != expected:
        raise SystemExit(f"axe-core {VERSION}: integrity mismatch (got sha512-{got})")


def axe_min_js(package: bytes) -> bytes:
    with tarfile.open(fileobj=io.BytesIO(package), mode="r:gz") as tar:
        member = tar.getmember(MEMBER)
        if not member.isfile() or member.size > MAX_BYTES:
            raise SystemExit(f"{MEMBER}: not a file of at most {MAX_BYTES} bytes")
        extracted = tar.extractfile(member)
        assert extracted is not None
        script = extracted.read()
    if f"axe v{VERSION}".encode() not in script[:200]:
        raise SystemExit(f"{MEMBER} does not say axe v{VERSION}")
    return script


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    dest = Path(argv[1])
    package = fetch()
    check(package)
    script = axe_min_js(package)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=dest.parent, delete=False) as out:
        out.write(script)
    os.replace(out.name, dest)  # whole or not at all: parallel makes may race here
    print(f"axe-core {VERSION}: {dest} ({len(script):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
