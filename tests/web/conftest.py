"""Fixtures for the web tests (see :mod:`tests.web.helpers`; the browser's are in
tests/conftest.py, for every folder's browser tests)."""

from __future__ import annotations

from tests.web.helpers import make_server

__all__ = ["make_server"]
