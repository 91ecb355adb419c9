// What every game's part of the play page shares: the page's state, the socket's
// send, the status line and a small element builder. play.js owns the connection and
// the lobby; play/<game>.js draws one game from the seat view and turns clicks into
// play actions (docs/protocols/web.md, "Playing").
export const page = {
  socket: null, view: null, seated: false, name: "", table: "",
  token: null, // the rejoin token of the seat this page plays, or takes back on welcome
};
window.meeple = page; // for the browser tests and the curious

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) node.append(c);
  return node;
}

export function button(label, onclick, cls) {
  return el("button", { type: "button", class: cls, onclick }, label);
}

export function send(msg) {
  if (page.socket?.readyState === WebSocket.OPEN) page.socket.send(JSON.stringify(msg));
}

export function status(text) { document.getElementById("status").textContent = text; }

export function play(action) { status(""); send({ type: "play", action }); }

// Redraw the whole game from the last seat view (set by play.js).
let redraw = () => {};
export function onRedraw(fn) { redraw = fn; }
export function draw() { redraw(); }
