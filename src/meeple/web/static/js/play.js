// The play page (issue 13): sit at a lobby table and play over meeple-web/1
// (docs/protocols/web.md, "Playing"). Every "seat" message is the whole game as this seat
// sees it; the page redraws from it and keeps only what is being typed or clicked.
import { renderBoard, renderMoves, renderPanel, replaceChildren } from "./render.js";
import { PROTOCOL } from "./ws.js";

const TOKEN = "meeple.rejoin";
const page = {
  socket: null, view: null, seated: false, name: "", table: "",
  cursor: null, down: false, placed: [], blankNext: false, // Scrabble typing
  worker: null, moved: false, dome: false,                  // Santorini clicks
  tile: null,                                               // Spectrangle hand tile
};
window.meeple = page; // for the browser tests and the curious

function el(tag, attrs = {}, ...children) {
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

function send(msg) {
  if (page.socket?.readyState === WebSocket.OPEN) page.socket.send(JSON.stringify(msg));
}

function status(text) { document.getElementById("status").textContent = text; }

function play(action) { status(""); send({ type: "play", action }); }

// --- connection ------------------------------------------------------------------------

function connect() {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const socket = new WebSocket(`${scheme}//${location.host}/ws`);
  page.socket = socket;
  socket.addEventListener("open", () => socket.send(JSON.stringify({ type: "hello", protocol: PROTOCOL })));
  socket.addEventListener("message", (event) => {
    let msg;
    try { msg = JSON.parse(event.data); } catch { return; }
    if (msg.type === "welcome") {
      send({ type: "subscribe", topic: "lobby" });
      const token = sessionStorage.getItem(TOKEN);
      if (token) send({ type: "rejoin", token });
    } else if (msg.type === "lobby") tables(msg.data.tables);
    else if (msg.type === "seated") seated(msg);
    else if (msg.type === "seat") seatView(msg.data);
    else if (msg.type === "error") {
      if (msg.code === "refused" && !page.seated) sessionStorage.removeItem(TOKEN);
      if (msg.code === "illegal" && page.view?.game === "santorini") {
        page.worker = null; page.moved = false; // the refused step did not happen
      }
      status(msg.message);
    }
  });
  // A dropped socket comes back and presents the token: the seat is held meanwhile.
  socket.addEventListener("close", () => { page.seated = false; setTimeout(connect, 1000); });
}

function seated(msg) {
  page.seated = true;
  page.name = msg.name;
  page.table = msg.table;
  sessionStorage.setItem(TOKEN, msg.token);
  document.getElementById("play").hidden = false;
  document.getElementById("who").textContent = `You are ${msg.name}`;
  document.getElementById("table").textContent = msg.table;
  status("Waiting for the table to fill.");
}

// --- the lobby ---------------------------------------------------------------------------

function tables(list) {
  const rows = list.map((t) => el("tr", { "data-table": t.id },
    el("td", {}, t.id), el("td", {}, `${t.game} (${t.variant})`),
    el("td", {}, `${t.waiting.length}/${t.players}${t.start === "ready" ? " max, when ready" : ""}`),
    el("td", {}, t.waiting.map((w) => `${w.name} (${w.protocol})`).join(", ")),
    el("td", {},
      el("button", { type: "button", class: "sit", onclick: () => sit(t.id) }, "Sit"), " ",
      el("button", { type: "button", class: "addbot", onclick: () => send({ type: "bot", table: t.id }) }, "Add a bot"))));
  const target = document.getElementById("tables");
  target.replaceChildren(rows.length ? el("table", {}, el("tbody", {}, rows)) : el("p", { class: "empty" }, "No table is open."));
}

function nameInput() {
  const input = document.querySelector("#create [name=name]");
  if (!input.reportValidity()) return null;
  return input.value;
}

function sit(table) {
  const name = nameInput();
  if (name) send({ type: "sit", table, name });
}

document.getElementById("create").addEventListener("submit", (event) => {
  event.preventDefault();
  const form = new FormData(event.target);
  const name = nameInput();
  if (!name) return;
  const [game, variant] = String(form.get("game")).split("/");
  send({ type: "create", game, variant, size: Number(form.get("size")), name,
    start: form.get("ready") ? "ready" : "full" });
});
document.getElementById("ready").addEventListener("click", () => send({ type: "ready" }));
document.getElementById("leave").addEventListener("click", () => {
  send({ type: "leave" });
  sessionStorage.removeItem(TOKEN);
  document.getElementById("play").hidden = true;
});
document.getElementById("bot").addEventListener("click", () => send({ type: "bot", table: page.table }));

// --- the game --------------------------------------------------------------------------

function seatView(view) {
  const before = page.view;
  const turnChanged = !before || before.turn !== view.turn || before.phase !== view.phase;
  page.view = view;
  document.getElementById("play").hidden = false;
  // Typed tiles and a turn's clicks last until the turn passes (a Santorini turn is
  // several actions: the worker moved stays selected for its build).
  if (turnChanged || (view.game === "scrabble" && before.moves.length !== view.moves.length)) {
    page.placed = []; page.worker = null; page.moved = false;
  }
  if (view.over) {
    sessionStorage.removeItem(TOKEN);
    status("The game is over.");
  } else if (view.turn === view.you) {
    status("Your turn.");
  } else {
    status(`${view.players[view.turn] ?? ""} to play.`);
  }
  draw();
}

function draw() {
  const view = page.view;
  if (!view) return;
  replaceChildren("board", renderBoard(view));
  replaceChildren("panel", renderPanel(view));
  const moves = renderMoves(view);
  replaceChildren("moves", moves);
  moves.scrollTop = moves.scrollHeight;
  if (view.game === "scrabble") drawScrabble(view);
  else if (view.game === "santorini") drawSantorini(view);
  else drawSpectrangle(view);
}

function button(label, onclick, cls) { return el("button", { type: "button", class: cls, onclick }, label); }

// Scrabble: click a square (again: the other direction), type the letters (? then a
// letter for a blank), Enter sends, Backspace takes back, Escape clears.
function rackLeft(view) {
  let rack = view.rack;
  for (const [, , t] of page.placed) {
    const tile = t === t.toUpperCase() ? t : "?";
    rack = rack.replace(tile, "");
  }
  return rack;
}

function drawScrabble(view) {
  const board = document.querySelector("#board .sboard");
  for (const [x, y, t] of page.placed) {
    const sq = board.querySelector(`[data-x="${x}"][data-y="${y}"]`);
    sq.replaceChildren(el("span", { class: t === t.toUpperCase() ? "tile tent" : "tile blank tent" }, t.toUpperCase()));
  }
  if (page.cursor) {
    const [x, y] = page.cursor;
    board.querySelector(`[data-x="${x}"][data-y="${y}"]`)?.classList.add(page.down ? "cursor-down" : "cursor");
  }
  board.addEventListener("click", (event) => {
    const sq = event.target.closest(".sq");
    if (!sq) return;
    const at = [Number(sq.dataset.x), Number(sq.dataset.y)];
    if (page.cursor && page.cursor[0] === at[0] && page.cursor[1] === at[1]) page.down = !page.down;
    else { page.cursor = at; page.down = false; }
    draw();
  });
  const left = rackLeft(view);
  replaceChildren("mine", el("p", { class: "rack" }, "Your rack: ",
    [...left].map((t) => el("span", { class: t === "?" ? "rtile blank" : "rtile" }, t === "?" ? " " : t))));
  const exchange = el("input", { id: "exchange", placeholder: "tiles to exchange", size: 8, maxlength: 7 });
  replaceChildren("controls", el("p", {},
    button("Play", sendPlacement, "send"), " ", button("Clear", () => { page.placed = []; draw(); }), " ",
    button("Pass", () => play({ kind: "pass" }), "pass"), " ", exchange, " ",
    button("Exchange", () => play({ kind: "exchange", tiles: exchange.value.toUpperCase().replace(/[^A-Z?]/g, "") }), "exchange")));
}

function sendPlacement() {
  if (page.placed.length) play({ kind: "place", tiles: page.placed });
}

function typeLetter(letter) {
  const view = page.view;
  if (!page.cursor) return;
  const left = rackLeft(view);
  let tile;
  if (page.blankNext || !left.includes(letter)) {
    if (!left.includes("?")) { status(`No ${letter} on your rack.`); return; }
    tile = letter.toLowerCase();
  } else tile = letter;
  page.blankNext = false;
  let [x, y] = page.cursor;
  const filled = (cx, cy) => view.board[cy][cx] !== "." || page.placed.some(([px, py]) => px === cx && py === cy);
  while (x < view.size && y < view.size && filled(x, y)) { if (page.down) y++; else x++; }
  if (x >= view.size || y >= view.size) return;
  page.placed.push([x, y, tile]);
  page.cursor = page.down ? [x, y + 1] : [x + 1, y];
  draw();
}

document.addEventListener("keydown", (event) => {
  if (page.view?.game !== "scrabble" || event.target.tagName === "INPUT") return;
  if (/^[a-zA-Z]$/.test(event.key)) { typeLetter(event.key.toUpperCase()); event.preventDefault(); }
  else if (event.key === "?") { page.blankNext = true; event.preventDefault(); }
  else if (event.key === "Enter") { sendPlacement(); event.preventDefault(); }
  else if (event.key === "Backspace") {
    const last = page.placed.pop();
    if (last) page.cursor = [last[0], last[1]];
    draw(); event.preventDefault();
  } else if (event.key === "Escape") { page.placed = []; draw(); }
});

// Santorini: gods and the starter by buttons; a worker is placed by clicking a cell;
// in play click a worker, then where it moves, then where it builds (Dome: a dome).
function rowCol(c) { return [Math.floor(c / 5), c % 5]; }

function drawSantorini(view) {
  const mine = view.turn === view.you && !view.over;
  const controls = [];
  if (mine && (view.phase === "pool" || view.phase === "gods")) {
    const god = el("input", { id: "god", placeholder: "a god's name", size: 12 });
    controls.push(el("p", {}, view.phase === "pool" ? "Offer a god: " : "Take a god: ",
      view.phase === "gods" ? view.pool.map((g) => button(g, () => play({ kind: "god", god: g }), "god")) : [god, " ",
        button("Offer", () => play({ kind: "god", god: god.value.trim() }), "god")]));
  } else if (mine && view.phase === "starter") {
    controls.push(el("p", {}, "Who starts? ", view.players.map((p, i) => button(p, () => play({ kind: "starter", player: i }), "starter"))));
  }
  if (mine && view.phase === "play") {
    const dome = el("label", {}, el("input", { type: "checkbox", id: "dome", checked: page.dome || null,
      onchange: (e) => { page.dome = e.target.checked; } }), " build a dome");
    controls.push(el("p", {}, button("Pass", () => play({ kind: "pass" }), "pass"), " ",
      button("Undo", () => play({ kind: "undo", all: false }), "undo"), " ",
      button("Lose", () => play({ kind: "lose" }), "lose"), " ", dome));
  }
  replaceChildren("controls", el("div", {}, controls));
  replaceChildren("mine", el("p", {}, mine ? (page.worker === null ? "" : `worker on ${page.worker}`) : ""));
  document.querySelector("#board .tboard").addEventListener("click", (event) => {
    const cell = event.target.closest(".cell");
    if (!cell || !mine) return;
    const c = Number(cell.dataset.cell);
    if (view.phase === "place") { play({ kind: "place", cell: rowCol(c) }); return; }
    if (view.phase !== "play") return;
    const own = view.workers.find((w) => w.cell === c && w.owner === view.you);
    if (own && !page.moved) { page.worker = c; draw(); return; }
    if (page.worker === null) return;
    if (!page.moved) {
      play({ kind: "move", from: rowCol(page.worker), to: rowCol(c) });
      page.worker = c; page.moved = true; // a refused move is undone by the next view's
    } else {
      const action = { kind: "build", from: rowCol(page.worker), to: rowCol(c) };
      if (page.dome) action.level = 4;
      play(action);
    }
  });
}

// Spectrangle: pick a tile from your hand, rotate it, click a field to place it.
function rotate(tile) { return tile[2] + tile[0] + tile[1] + tile.slice(3); }

function drawSpectrangle(view) {
  const hand = view.hands[view.you] ?? [];
  if (page.tile && !hand.some((t) => sameTile(t, page.tile))) page.tile = null;
  replaceChildren("mine", el("p", { class: "hand" }, "Your hand: ", hand.map((t) =>
    button(page.tile && sameTile(t, page.tile) ? page.tile : t, () => { page.tile = t; draw(); },
      page.tile && sameTile(t, page.tile) ? "mini picked" : "mini"))));
  replaceChildren("controls", el("p", {},
    button("Rotate", () => { if (page.tile) { page.tile = rotate(page.tile); draw(); } }, "rotate"), " ",
    button("Exchange", () => { if (page.tile) play({ kind: "exchange", tile: page.tile }); }, "exchange"), " ",
    button("Skip", () => play({ kind: "skip" }), "skip")));
  document.querySelector("#board .rboard").addEventListener("click", (event) => {
    const field = event.target.closest(".field");
    if (!field || !page.tile || view.turn !== view.you) return;
    play({ kind: "place", tile: page.tile, index: Number(field.dataset.field) });
  });
}

function sameTile(a, b) {
  const r1 = rotate(a), r2 = rotate(r1);
  return [a, r1, r2].includes(b);
}

connect();
