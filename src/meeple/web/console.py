"""The CMPN402 contest console: ``/cmpn402``, read-only for all, controls for the admin.

The referee's console object (``Services.console``, made by the CMPN402
listener) gives a snapshot, actions, change callbacks and files. Here:

- ``GET /cmpn402``: the board, clocks, challenge window, agents, series and standings
  for anyone (the board through the Scrabble spectator view: never rack letters);
  live over the WebSocket's ``console`` topic.
- ``POST /cmpn402/login`` with the admin token (``token`` form field), once: a random
  session id comes back in a ``Secure; HttpOnly; SameSite=Strict`` cookie, and the
  page's forms carry that session's CSRF token. At most ``ATTEMPTS`` tries a minute
  per client address, like the account sign-in (429 past it), counted with the wrong
  tokens the referee's ``/admin`` endpoint saw (:mod:`meeple.server.edge.attempts`).
- ``POST /cmpn402/logout`` (``csrf``): 403 with a wrong or missing CSRF token.
- ``GET /cmpn402?m=<code>``: the page shows the fixed message of that code
  (:data:`MESSAGES`), never the text of the query (issue 22).
- ``POST /cmpn402/action`` (``action``, ``csrf``, maybe ``name``): 401 without a valid
  session, 403 with a wrong CSRF token or a foreign ``Origin``, 409 when the referee
  refuses (its reason in the body). Never a GET.
- ``GET /cmpn402/files/<game_id>/<log|gcg>``: the admin's downloads (a live game's log
  holds the racks, so it is not for spectators).
"""

from __future__ import annotations

import collections
import hmac
import inspect
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, quote

from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import BaseRoute, Route

from meeple.games.scrabble.view import spectator_view
from meeple.server.edge.attempts import admin_attempts
from meeple.server.lobby.cmpn402_console import Console
from meeple.server.store.database import StoreUnavailable
from meeple.web.templating import render

if TYPE_CHECKING:
    from meeple.web.app import WebContext

__all__ = ["ACTIONS", "COOKIE", "MESSAGES", "Sessions", "public_snapshot", "routes"]

COOKIE = "meeple_console"
ACTIONS = ("start", "pause", "resume", "stop", "swap", "abort", "withdraw")
# Form bodies here are a few fields; anything longer is not a console form.
MAX_FORM_BYTES = 2048
# What ``/cmpn402?m=`` may say: a code from the redirect after a form, shown as its text.
MESSAGES: dict[str, str] = {
    **{action: f"{action}: done" for action in ACTIONS},
    "signed-in": "Signed in as the admin.",
    "signed-out": "Signed out.",
}


def public_snapshot(console: Console) -> dict[str, Any]:
    """The console's snapshot made JSON-safe: each live game as its spectator view."""
    snapshot = dict(console.snapshot())
    boards = []
    for board in snapshot.get("boards", []):
        board = dict(board)
        game = board.pop("game", None)
        # A cluster edge's board comes with its room's spectator view (RemoteConsole).
        board["view"] = board.get("view") if game is None else spectator_view(game)
        boards.append(board)
    snapshot["boards"] = boards
    return snapshot


class Sessions:
    """Signed-in admin browsers: session id -> CSRF token (at most ``limit``, oldest go)."""

    def __init__(self, limit: int = 64) -> None:
        self._tokens: collections.OrderedDict[str, str] = collections.OrderedDict()
        self._limit = limit

    def create(self) -> tuple[str, str]:
        session, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        self._tokens[session] = csrf
        while len(self._tokens) > self._limit:
            self._tokens.popitem(last=False)
        return session, csrf

    def csrf(self, session: str | None) -> str | None:
        """The CSRF token of a valid session, or None."""
        if not session:
            return None
        return self._tokens.get(session)

    def drop(self, session: str | None) -> None:
        if session:
            self._tokens.pop(session, None)


def _ctx(request: Request) -> WebContext:
    ctx: WebContext = request.app.state.ctx
    return ctx


def _sessions(request: Request) -> Sessions:
    sessions: Sessions = request.app.state.console_sessions
    return sessions


async def _form(request: Request) -> dict[str, str] | None:
    """The urlencoded form of a small POST, or None when it is too big or not a form."""
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            return None
    form = await _parse(request, body)
    return form


async def _parse(request: Request, body: bytes) -> dict[str, str] | None:
    if not request.headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
        return None
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, max_num_fields=8)
    except (UnicodeDecodeError, ValueError):
        return None
    return dict(pairs)


def _same_origin(request: Request) -> bool:
    """A browser's cross-site POST carries a foreign Origin; a missing one is a non-browser."""
    origin = request.headers.get("origin")
    if origin is None or origin == "null":
        return origin is None
    host = request.headers.get("host", "")
    return origin.split("://", 1)[-1] == host


def _wants_json(request: Request) -> bool:
    return "application/json" in request.headers.get("accept", "")


async def console_page(request: Request) -> Response:
    return _console(request)


def _console(request: Request, *, status: int = 200, error: str = "") -> Response:
    """The console page; ``error`` in a banner above it (a wrong admin token, say)."""
    ctx = _ctx(request)
    console = ctx.console()
    csrf = _sessions(request).csrf(request.cookies.get(COOKIE))
    last = ctx.feed.last("console")
    snapshot = last.data if last is not None else None
    if console is not None and snapshot is None:
        snapshot = public_snapshot(console)
    return render(
        request,
        "console.html",
        running=console is not None,
        snapshot=snapshot,
        csrf=csrf,
        actions=ACTIONS,
        message=MESSAGES.get(request.query_params.get("m", ""), ""),
        error=error,
        status=status,
    )


async def fragment(request: Request) -> Response:
    """The console's body alone, for the page's script to swap in after a change."""
    ctx = _ctx(request)
    console = ctx.console()
    if console is None:
        return PlainTextResponse("the CMPN402 referee is not running\n", status_code=404)
    last = ctx.feed.last("console")
    snapshot = last.data if last is not None else public_snapshot(console)
    csrf = _sessions(request).csrf(request.cookies.get(COOKIE))
    env = request.app.state.templates
    html = env.get_template("console_parts.html").module.console_body(snapshot, csrf)
    return HTMLResponse(str(html))


async def login(request: Request) -> Response:
    ctx = _ctx(request)
    console = ctx.console()
    form = await _form(request)
    if console is None:
        return PlainTextResponse("the CMPN402 referee is not running\n", status_code=404)
    if form is None or not _same_origin(request):
        return PlainTextResponse("bad sign-in request\n", status_code=400)
    # Counted per client address like the account sign-in (issue 22), in the limiter the
    # referee's /admin endpoint counts its wrong tokens in (one token, one count).
    wait = admin_attempts(ctx.services).allow(
        request.client.host if request.client is not None else "?"
    )
    if wait is not None:
        return PlainTextResponse(
            "too many attempts from your address; wait a minute\n",
            status_code=429,
            headers={"Retry-After": str(max(1, round(wait)))},
        )
    token = form.get("token", "")
    if not token or not console.check_token(token):
        # The page again with the error, not bare text (issue 24).
        return _console(request, status=403, error="Wrong admin token: nothing was signed in.")
    session, _csrf = _sessions(request).create()
    response = RedirectResponse("/cmpn402", status_code=303)
    response.set_cookie(
        COOKIE, session, httponly=True, secure=True, samesite="strict", path="/cmpn402"
    )
    return response


async def logout(request: Request) -> Response:
    form = await _form(request)
    sessions = _sessions(request)
    session = request.cookies.get(COOKIE)
    csrf = sessions.csrf(session)
    if csrf is None:
        return PlainTextResponse("not signed in\n", status_code=401)
    given = form.get("csrf", "") if form is not None else ""
    if not _same_origin(request) or not hmac.compare_digest(given.encode(), csrf.encode()):
        return PlainTextResponse("the form's CSRF token is wrong; reload the page\n", 403)
    sessions.drop(session)
    response = RedirectResponse("/cmpn402?m=signed-out", status_code=303)
    response.delete_cookie(COOKIE, path="/cmpn402", secure=True, httponly=True, samesite="strict")
    return response


async def action(request: Request) -> Response:
    ctx = _ctx(request)
    console = ctx.console()
    csrf = _sessions(request).csrf(request.cookies.get(COOKIE))
    if csrf is None:
        return _answer(request, 401, "sign in with the admin token first")
    form = await _form(request)
    if form is None or not _same_origin(request):
        return _answer(request, 403, "not a form from this console")
    if not hmac.compare_digest(form.get("csrf", "").encode(), csrf.encode()):
        return _answer(request, 403, "the form's CSRF token is wrong; reload the page")
    if console is None:
        return _answer(request, 404, "the CMPN402 referee is not running")
    name = form.get("action", "")
    if name not in ACTIONS:
        return _answer(request, 400, f"no action {name[:20]!r}")
    params = {"name": form["name"][:64]} if name == "withdraw" and "name" in form else {}
    try:
        said = console.act(name, **params)
        if inspect.isawaitable(said):  # a cluster edge's asks its leader (meeple.node.contest)
            said = await said
    except ValueError as e:  # ConsoleError is a ValueError
        return _answer(request, 409, str(e))
    return _answer(request, 200, str(said) or f"{name}: done", name)


def _answer(request: Request, status: int, message: str, action_name: str = "") -> Response:
    if _wants_json(request):
        return JSONResponse({"ok": status == 200, "message": message}, status_code=status)
    if status == 200:
        code = action_name if action_name in MESSAGES else ""
        return RedirectResponse(f"/cmpn402?m={quote(code)}", status_code=303)
    return PlainTextResponse(message + "\n", status_code=status)


async def download(request: Request) -> Response:
    ctx = _ctx(request)
    console = ctx.console()
    if _sessions(request).csrf(request.cookies.get(COOKIE)) is None:
        return PlainTextResponse("sign in with the admin token first\n", status_code=401)
    kind = request.path_params["kind"]
    game_id = request.path_params["game_id"]
    if console is None or kind not in ("log", "gcg"):
        return PlainTextResponse("no such file\n", status_code=404)
    asked = console.file(game_id, kind)
    found: Path | bytes | None
    if inspect.isawaitable(asked):  # a cluster edge's reads the stored game (a store node)
        try:
            found = await asked
        except StoreUnavailable:
            return PlainTextResponse("no store node answers now\n", status_code=503)
    else:
        found = asked
    if found is None:
        return PlainTextResponse("no such file\n", status_code=404)
    if isinstance(found, bytes):
        # The name is a game id of file_wanted's letters: nothing to quote in the header.
        disposition = f'attachment; filename="{game_id}.{kind}"'
        return Response(
            found,
            media_type="text/plain; charset=utf-8",
            headers={"Content-Disposition": disposition},
        )
    return FileResponse(found, media_type="text/plain; charset=utf-8", filename=found.name)


def routes() -> list[BaseRoute]:
    return [
        Route("/cmpn402", console_page),
        Route("/cmpn402/fragment", fragment),
        Route("/cmpn402/login", login, methods=["POST"]),
        Route("/cmpn402/logout", logout, methods=["POST"]),
        Route("/cmpn402/action", action, methods=["POST"]),
        Route("/cmpn402/files/{game_id:str}/{kind:str}", download),
    ]
