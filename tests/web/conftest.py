"""Fixtures for the web tests (see :mod:`tests.web.helpers`)."""

from __future__ import annotations

from tests.web.helpers import browser, make_server, shared_chromium

__all__ = ["browser", "make_server", "shared_chromium"]
