// The play page (issue 13): sit at a lobby table and play over meeple-web/1
// (docs/protocols/web.md, "Playing"). Every "seat" message is the whole game as this seat
// sees it; the page redraws from it and keeps only what is being typed or clicked.
import { renderBoard, renderMoves, renderPanel, replaceChildren } from "./render.js";
import { PROTOCOL } from "./ws.js";

import * as santorini from "./play/santorini.js";
import * as scrabble from "./play/scrabble.js";
import * as spectrangle from "./play/spectrangle.js";
import { el, onRedraw, page, send, status } from "./play/page.js";

// The rejoin token is kept per browser (localStorage), so a new tab or a reload takes
// the seat back. The page plays with its own copy (page.token): another tab may since
// have stored another seat's, and a page never forgets a token it does not hold.
const TOKEN = "meeple.rejoin";
page.token = localStorage.getItem(TOKEN);
// The lobby's "sit here" link names a table: /play?table=table-3.
const INVITED = new URLSearchParams(location.search).get("table");
const GAMES = { scrabble, santorini, spectrangle };

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
      if (page.token) send({ type: "rejoin", token: page.token });
    } else if (msg.type === "lobby") tables(msg.data.tables);
    else if (msg.type === "seated") seated(msg);
    else if (msg.type === "unseated") elsewhere();
    else if (msg.type === "seat") seatView(msg.data, msg.uid);
    else if (msg.type === "chat") chatLine(msg);
    else if (msg.type === "preview" && page.view) GAMES[page.view.game].preview?.(msg);
    else if (msg.type === "error") {
      // Refused while not seated but holding a token: the rejoin was refused (the game is
      // over, the grace period passed): the token is stale.
      if (msg.code === "refused" && !page.seated && page.token) { forget(); shown("elsewhere", false); }
      if (msg.code === "illegal" && page.view) GAMES[page.view.game].refused?.();
      status(msg.message);
    }
  });
  // A dropped socket comes back and presents the page's token: the seat is held meanwhile.
  socket.addEventListener("close", () => { page.seated = false; setTimeout(connect, 1000); });
}

function shown(id, on) { document.getElementById(id).hidden = !on; }

// Seated: the game takes the page (the form and the open tables come back after it).
function seated(msg) {
  page.seated = true;
  page.name = msg.name;
  page.table = msg.table;
  page.token = msg.token;
  localStorage.setItem(TOKEN, msg.token);
  shown("elsewhere", false);
  shown("join", false); shown("play", true); shown("over", false); shown("leave", true);
  document.getElementById("who").textContent = `You are ${msg.name}`;
  document.getElementById("table").textContent = msg.table;
  if (!page.view || page.view.over) {
    page.view = null;
    shown("before", true); shown("chat", false); // chat opens when the game starts
    status("Waiting for the table to fill.");
    waiting();
  }
}

// Back to the form and the open tables.
function unseated() {
  page.seated = false; page.view = null; page.table = "";
  forget();
  shown("join", true); shown("play", false); shown("over", false);
  status("");
}

// The seat is given up (left, the game over, the token refused): this page forgets its
// token, and so does the browser unless another tab has stored a newer seat's since.
function forget() {
  if (page.token && localStorage.getItem(TOKEN) === page.token) localStorage.removeItem(TOKEN);
  page.token = null;
}

// Another tab or window (any connection with the token) took this seat: the server said
// "unseated". This page steps aside and keeps no token, so its own reconnects do not take
// the seat back (two tabs would take it from each other for ever); the stored token is the
// other tab's now, so it stays. "Play here" takes the seat back on purpose.
let lost = null;
function elsewhere() {
  lost = page.token;
  page.seated = false; page.view = null; page.table = ""; page.token = null;
  shown("join", true); shown("play", false); shown("over", false); shown("elsewhere", true);
  status("");
}
document.getElementById("here").addEventListener("click", () => {
  page.token = lost;
  if (page.token) send({ type: "rejoin", token: page.token });
});

// --- the lobby ---------------------------------------------------------------------------

function botLevel(id = "botlevel") {
  return document.getElementById(id).value;
}

function tables(list) {
  const rows = list.map((t) => el("tr", { "data-table": t.id, class: t.id === INVITED ? "invited" : null },
    el("td", {}, t.id), el("td", {}, `${t.game} (${t.variant})`),
    el("td", {}, `${t.waiting.length}/${t.players}${t.start === "ready" ? " max, when ready" : ""}`),
    el("td", {}, t.waiting.map((w) => `${w.name} (${w.protocol})`).join(", ")),
    el("td", {},
      el("button", { type: "button", class: "sit", onclick: () => sit(t.id) }, "Sit"), " ",
      el("button", { type: "button", class: "addbot", onclick: () => send({ type: "bot", table: t.id, level: botLevel("lobbybotlevel") }) }, "Add a bot"))));
  page.tables = list;
  waiting();
  if (INVITED && !page.seated) {
    const open = list.some((t) => t.id === INVITED);
    status(open ? `Pick a name and press Sit to join ${INVITED}.` : `${INVITED} is no longer open.`);
  }
  const target = document.getElementById("tables");
  target.replaceChildren(rows.length ? el("table", {}, el("tbody", {}, rows)) : el("p", { class: "empty" }, "No table is open."));
}

// Who sits at this table so far, and the Ready button where the table starts on it
// (the lobby's snapshot and the seating can come in either order).
function waiting() {
  const mine = (page.tables ?? []).find((t) => t.id === page.table);
  if (!mine || page.view) return;
  document.getElementById("waiting").textContent = `· ${mine.game} (${mine.variant}) · `
    + `${mine.waiting.length} of ${mine.players}: ${mine.waiting.map((w) => `${w.name} (${w.protocol})`).join(", ")}`;
  shown("ready", mine.start === "ready");
}

function nameInput() {
  const input = document.querySelector("#create [name=name]");
  if (!input.reportValidity()) return null;
  return input.value;
}

function sit(table) {
  const name = nameInput();
  if (name) { clearChat(); send({ type: "sit", table, name }); }
}

document.getElementById("create").addEventListener("submit", (event) => {
  event.preventDefault();
  const form = new FormData(event.target);
  const name = nameInput();
  if (!name) return;
  const [game, variant] = String(form.get("game")).split("/");
  clearChat();
  send({ type: "create", game, variant, size: Number(form.get("size")), name,
    start: form.get("ready") ? "ready" : "full" });
});
document.getElementById("ready").addEventListener("click", () => send({ type: "ready" }));
document.getElementById("leave").addEventListener("click", () => {
  if (page.view && !page.view.over && !window.confirm("Leave the game? Your seat is given up.")) return;
  send({ type: "leave" });
  unseated();
});
document.getElementById("again").addEventListener("click", unseated);
document.getElementById("bot").addEventListener("click", () => send({ type: "bot", table: page.table, level: botLevel() }));

// --- the game --------------------------------------------------------------------------

function seatView(view, uid) {
  const before = page.view;
  page.view = view;
  shown("join", false); shown("play", true); shown("before", false); shown("chat", !view.over);
  document.getElementById("waiting").textContent = `· ${view.game}${view.variant ? ` (${view.variant})` : ""}`;
  // What is being typed or clicked lasts as long as the game's part says (newView).
  GAMES[view.game].newView(before, view);
  if (view.over) {
    forget();
    status("The game is over.");
    document.getElementById("result").textContent = resultText(view);
    document.getElementById("replay").href = `/games/${uid}`;
    shown("over", true); shown("leave", false); shown("chat", false); // chat ends with the game
  } else if (view.turn === view.you) {
    status("Your turn.");
  } else {
    status(`${view.players[view.turn] ?? ""} to play.`);
  }
  draw();
}

// "ann wins 380 to 340", "a draw at 300", "pia wins": from the view's result.
function resultText(view) {
  const r = view.result;
  if (!r) return "The game was abandoned.";
  const names = (r.winners ?? []).map((w) => (w === view.you ? "You" : view.players[w]));
  const scores = r.scores ? ` (${r.scores.map((s, i) => `${view.players[i]} ${s}`).join(", ")})` : "";
  if (!names.length) return `No winner${scores}.`;
  if (names.length > 1) return `A draw between ${names.join(" and ")}${scores}.`;
  return `${names[0]} ${names[0] === "You" ? "win" : "wins"}${scores}.`;
}

function draw() {
  const view = page.view;
  if (!view) return;
  replaceChildren("board", renderBoard(view));
  replaceChildren("panel", renderPanel(view));
  const moves = renderMoves(view);
  replaceChildren("moves", moves);
  moves.scrollTop = moves.scrollHeight;
  if (view.over) {
    // Nothing left to play: no rack, hand or buttons (the result says how it ended).
    for (const id of ["mine", "controls"]) document.getElementById(id).replaceChildren();
    return;
  }
  GAMES[view.game].drawGame(view);
}
onRedraw(draw);

// --- chat ------------------------------------------------------------------------------
// Lines said in this seat's game, on any protocol that has chat (its own come back too).
// The server keeps no history: a reload starts an empty log.

// A new table starts an empty log (a rejoin keeps what the page shows).
function clearChat() { document.getElementById("chat-log").replaceChildren(); }

function chatLine(msg) {
  const log = document.getElementById("chat-log");
  const mine = msg.from === page.name;
  log.append(el("p", { class: mine ? "line mine" : "line" },
    el("span", { class: "from" }, msg.from), " ", el("span", { class: "text" }, msg.text)));
  while (log.childElementCount > 200) log.firstElementChild.remove();
  log.scrollTop = log.scrollHeight;
}

document.getElementById("chat").addEventListener("submit", (event) => {
  event.preventDefault();
  const input = event.target.elements.text;
  const text = input.value;
  if (!text.trim()) return;
  send({ type: "chat", text });
  input.value = "";
});

document.addEventListener("keydown", (event) => { if (page.view) GAMES[page.view.game].keydown?.(event); });

connect();
