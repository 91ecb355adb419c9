"""The conformance kits' guide as a page of the web app: ``/check``.

The lobby links here ("Testing your own client or server", issue 23). The page is
``docs/check.md`` itself, rendered to HTML, so the guide has one source and the page is
never older than the document. The package carries the document as
``meeple/web/docs/check.md`` (a link to ``docs/check.md`` in the repository; a built
wheel holds a copy). Markdown is rendered by markdown-it-py (CommonMark, plus tables),
with raw HTML off: the page holds no markup the document did not spell in Markdown.
"""

from __future__ import annotations

import functools
from pathlib import Path

import markupsafe
from markdown_it import MarkdownIt
from starlette.requests import Request
from starlette.responses import Response

from meeple.web.templating import render

__all__ = ["GUIDE", "check_page", "guide_html"]

GUIDE = Path(__file__).parent / "docs" / "check.md"


@functools.cache
def guide_html() -> tuple[str, markupsafe.Markup]:
    """The guide's title (its first heading) and its body as HTML; read once."""
    text = GUIDE.read_text(encoding="utf-8")
    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    tokens = md.parse(text)
    title = next(
        (
            t.content
            for i, t in enumerate(tokens)
            if t.type == "inline" and i and tokens[i - 1].type == "heading_open"
        ),
        "meeple check",
    )
    body = md.renderer.render(tokens, md.options, {})
    # A long sample report scrolls sideways: its block takes the focus, so a keyboard
    # scrolls it too (axe's scrollable-region-focusable). Every "<pre>" here is the
    # renderer's: the document's own text is escaped and raw HTML is off (above).
    body = body.replace("<pre>", '<pre tabindex="0">')
    return title, markupsafe.Markup(body)


async def check_page(request: Request) -> Response:
    title, body = guide_html()
    return render(request, "check.html", title=title, body=body)
