// The browser side of meeple-web/1 (docs/protocols/web.md): hello, subscribe, and
// hand every snapshot to the page; reconnect with backoff when the socket drops.
export const PROTOCOL = "meeple-web/1";

// ``onMessage`` takes what is neither a snapshot nor an error (the spectators' chat);
// the returned stop function has ``send`` for the page's own messages.
export function watch(subscriptions, onSnapshot, { onError = () => {}, onMessage = () => {}, onOpen = () => {} } = {}) {
  const live = document.getElementById("live");
  let delay = 500;
  let socket = null;
  let stopped = false;
  function open() {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const mine = new WebSocket(`${scheme}//${location.host}/ws`);
    socket = mine;
    mine.addEventListener("open", () => {
      mine.send(JSON.stringify({ type: "hello", protocol: PROTOCOL }));
    });
    mine.addEventListener("message", (event) => {
      let msg;
      try { msg = JSON.parse(event.data); } catch { return; }
      if (msg.type === "welcome") {
        delay = 500;
        if (live) live.hidden = false;
        for (const sub of subscriptions) mine.send(JSON.stringify({ type: "subscribe", ...sub }));
        onOpen();
      } else if (msg.type === "error") {
        onError(msg);
      } else if (msg.type === "lobby" || msg.type === "game" || msg.type === "console") {
        onSnapshot(msg);
      } else {
        onMessage(msg);
      }
    });
    mine.addEventListener("close", () => {
      if (socket !== mine) return; // closed on leaving the page, or replaced since
      if (live) live.hidden = true;
      if (!stopped) setTimeout(open, delay);
      delay = Math.min(delay * 2, 10000);
    });
  }
  open();
  // Leaving the page (the browser may keep it frozen in its back/forward cache): the
  // socket closes, so the server keeps nothing for a page nobody sees; back, it opens again.
  window.addEventListener("pagehide", () => { const s = socket; socket = null; s?.close(); });
  window.addEventListener("pageshow", (event) => { if (event.persisted && !stopped && !socket) open(); });
  const stop = () => { stopped = true; socket?.close(); };
  stop.send = (msg) => { if (socket?.readyState === WebSocket.OPEN) socket.send(JSON.stringify(msg)); };
  return stop;
}
