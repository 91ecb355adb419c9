"""An edge's web port: ``GET /api/cluster`` and the spectators' WebSocket (``/ws``).

Spectators speak the web protocol (docs/protocols/web.md) as with ``meeple serve``: a
``subscribe`` to ``game`` with a room's uid gets the whole snapshot at once, then every
change (as deltas if asked). The room runs on a rooms node; the edge hears its views over
the bus once for all its spectators (:class:`meeple.node.views.ViewRelay`) and writes
them with ``meeple serve``'s own :class:`~meeple.web.fanout.Fanout` and listener.

What a cluster edge does not serve on its web port (yet): the pages, the lobby and
console topics, and playing from a browser. Those get the protocol's own ``error``
reply (``refused``), and the connection goes on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from meeple.protocols import web as proto
from meeple.protocols.web.errors import ErrorCode
from meeple.server.feed import Feed, game_topic
from meeple.web.app import WebConnection, WebContext
from meeple.web.fanout import Fanout

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.websockets import WebSocket

    from meeple.node.status import ClusterView
    from meeple.node.views import ViewRelay
    from meeple.server.app import Services

__all__ = ["edge_web_app"]

SPECTATORS_ONLY = "this cluster edge serves spectators of running games (subscribe to a game)"


class _EdgeContext(WebContext):
    """What an edge's WebSocket needs: the services (limits) and the relayed feed."""

    def __init__(self, services: Services, feed: Feed) -> None:  # no lobby, no store here
        self.services = services
        self.feed = feed


class EdgeConnection(WebConnection):
    """One spectator's WebSocket on an edge: rooms' views come through ``relay``."""

    def __init__(
        self, websocket: WebSocket, ctx: WebContext, fanout: Fanout, size: int, relay: ViewRelay
    ) -> None:
        super().__init__(websocket, ctx, fanout, size)
        self.relay = relay

    async def _subscribe(self, message: proto.Subscribe) -> None:
        if message.topic != "game" or message.uid is None:
            self.session.not_found(message)  # forgets the subscription
            await self.send(proto.Error(ErrorCode.REFUSED, SPECTATORS_ONLY))
            return
        if not await self.relay.exists(message.uid):
            await self.send(self.session.not_found(message))
            return
        if self._sink is None:
            raise RuntimeError("the edge's web needs its listener's FrameProtocol")
        if self.spectator is None:
            self.spectator = self.fanout.spectator(self._sink)
        self.fanout.watch(self.spectator, game_topic(message.uid), delta=message.delta)

    async def _play(self, message: proto.ClientMessage) -> None:
        await self.send(proto.Error(ErrorCode.REFUSED, SPECTATORS_ONLY))


def edge_web_app(services: Services, view: ClusterView, relay: ViewRelay) -> Starlette:
    """The edge's ASGI app; serve it with :class:`meeple.web.listener.WebListener`. Its
    WebSockets pass the same gate as ``meeple serve``'s (origin, connections per address:
    :func:`meeple.web.app.websocket_endpoint`)."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route, WebSocketRoute

    from meeple.server.edge.limits import AddressLimiter
    from meeple.web.app import Hub, websocket_endpoint

    ctx = _EdgeContext(services, relay.feed)
    fanout = Fanout(relay.feed, on_first=relay.watch, on_last=relay.unwatch)
    max_size = services.config.web.max_message_size

    async def cluster(request: Request) -> JSONResponse:
        return JSONResponse(view.snapshot())

    def connection(websocket: WebSocket) -> EdgeConnection:
        return EdgeConnection(websocket, ctx, fanout, max_size, relay)

    app = Starlette(
        routes=[Route("/api/cluster", cluster), WebSocketRoute("/ws", websocket_endpoint)]
    )
    app.state.hub = Hub(fanout)
    app.state.connection = connection
    app.state.origins = frozenset(services.config.web.origins)
    app.state.addresses = AddressLimiter(services.config.limits.max_connections_per_address)
    return app
