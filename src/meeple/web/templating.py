"""The Jinja2 environment the pages render with, and :func:`render`.

Autoescaping is on for every template, so a player's name is always text; values
embedded for scripts go through the ``json_script`` filter (no ``</`` can end the
element early).
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import jinja2
import markupsafe
from starlette.requests import Request
from starlette.responses import HTMLResponse

from meeple.web.boards import spectrangle_geometry
from meeple.web.wording import lexicon_label, reason_text

__all__ = ["TEMPLATES", "environment", "render"]

TEMPLATES = Path(__file__).parent / "templates"


def _when(t: float) -> str:
    return datetime.datetime.fromtimestamp(t, datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")


def _json_script(value: Any) -> markupsafe.Markup:
    return markupsafe.Markup(json.dumps(value, separators=(",", ":")).replace("<", "\\u003c"))


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["when"] = _when
    env.filters["json_script"] = _json_script
    env.filters["reason"] = reason_text
    env.filters["lexicon"] = lexicon_label
    env.globals["geometry"] = spectrangle_geometry()
    # A cluster edge sets it: its nav leaves out what an edge does not serve.
    env.globals["cluster_edge"] = False
    return env


def render(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
    """The template ``name`` as a response, with the app's environment."""
    env: jinja2.Environment = request.app.state.templates
    ctx = getattr(request.app.state, "ctx", None)
    # Every page says when the store is failing (docs/durability.md, Faults).
    trouble = ctx.store_trouble() if ctx is not None else None
    html = env.get_template(name).render(request=request, store_trouble=trouble, **context)
    return HTMLResponse(html, status_code=status)
