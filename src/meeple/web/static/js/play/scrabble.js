// The Scrabble part of the play page: type or drag tiles onto the board, choose a
// blank's letter, see the play's score (or the engine's refusal) before sending it.
import { button, draw, el, page, play, send, status } from "./page.js";
import { replaceChildren } from "../render.js";

// page.placed: the tentative tiles [x, y, tile] (a blank is the lower-case letter it
// stands for); page.order: the rack in the order the player arranged it; page.choosing:
// the square waiting for a blank's letter; page.preview: the server's last preview.
Object.assign(page, {
  cursor: null, down: false, placed: [], order: [], choosing: null, preview: null, previewId: 0,
});

// Typed tiles last until someone moves (in a lone Clarkson game the turn stays put).
export function newView(before, view) {
  if (!before || before.turn !== view.turn || before.moves.length !== view.moves.length) {
    page.placed = [];
    page.choosing = null;
  }
  syncOrder(view.rack);
  changed(); // the board or the rack may have changed under the tiles: preview again
}

// --- the rack -----------------------------------------------------------------------

// Keep the player's arrangement of the tiles still held; new tiles go to the end.
function syncOrder(rack) {
  const pool = [...rack];
  const kept = [];
  for (const t of page.order) {
    const i = pool.indexOf(t);
    if (i >= 0) { kept.push(t); pool.splice(i, 1); }
  }
  page.order = kept.concat(pool);
}

const rackTile = (t) => (t === t.toUpperCase() ? t : "?");

// The rack as shown: the arranged tiles without those on the board.
function rackLeft() {
  const left = [...page.order];
  for (const [, , t] of page.placed) {
    const i = left.indexOf(rackTile(t));
    if (i >= 0) left.splice(i, 1);
  }
  return left;
}

// Set the shown rack (after a reorder, a shuffle, a tile taken back).
function setLeft(left) {
  page.order = left.concat(page.placed.map(([, , t]) => rackTile(t)));
}

function shuffle() {
  const left = rackLeft();
  for (let i = left.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [left[i], left[j]] = [left[j], left[i]];
  }
  setLeft(left);
  draw();
}

// --- the board ----------------------------------------------------------------------

function isEmpty(view, x, y) {
  return view.board[y][x] === "." && !page.placed.some(([px, py]) => px === x && py === y);
}

function placedAt(x, y) {
  return page.placed.findIndex(([px, py]) => px === x && py === y);
}

// Put a rack tile on an empty square; a blank asks for its letter first.
function putTile(tile, x, y) {
  if (tile === "?") { choose(x, y); return; }
  page.placed.push([x, y, tile]);
  changed();
  draw();
}

// --- the blank's letter -------------------------------------------------------------

function choose(x, y) {
  page.choosing = [x, y];
  draw();
  document.querySelector("#chooser button")?.focus();
}

function chosen(letter) {
  const [x, y] = page.choosing;
  page.choosing = null;
  page.placed.push([x, y, letter.toLowerCase()]);
  if (page.cursor && page.cursor[0] === x && page.cursor[1] === y) advance(x, y);
  changed();
  draw();
}

function cancelChoice() {
  page.choosing = null;
  draw();
}

function chooser() {
  const [x, y] = page.choosing;
  const letters = [..."ABCDEFGHIJKLMNOPQRSTUVWXYZ"].map((l) => el("button", {
    type: "button", "aria-label": `blank as ${l}`, onclick: () => chosen(l),
  }, l));
  return el("div", { id: "chooser", class: "chooser", role: "group", "aria-label": `Letter for the blank at ${coord(x, y)}` },
    el("p", {}, `The blank at ${coord(x, y)} is: (type a letter, Escape cancels)`),
    el("div", { class: "letters" }, letters),
    button("Cancel", cancelChoice, "cancel"));
}

function coord(x, y) { return `${"ABCDEFGHIJKLMNO"[x] ?? x}${y + 1}`; }

// --- the preview ------------------------------------------------------------------

// Ask the server what the tiles on the board would score, at most every 150 ms
// (docs/protocols/web.md, "preview"); only the answer to the last question counts.
let previewTimer = null;
function changed() {
  clearTimeout(previewTimer);
  page.preview = null;
  if (!page.placed.length) return;
  previewTimer = setTimeout(() => {
    page.previewId = (page.previewId + 1) % 2147483647;
    send({ type: "preview", id: page.previewId, action: { kind: "place", tiles: page.placed } });
  }, 150);
}

export function preview(msg) {
  if (msg.id !== page.previewId || !page.placed.length) return;
  page.preview = msg;
  showPreview();
}

function previewText() {
  const p = page.preview;
  if (!page.placed.length) return "";
  if (!p) return "…";
  if (p.refusal) return `Not allowed: ${p.refusal}`;
  const words = p.words.map((w) => `${w.word} ${w.score}`).join(", ");
  return `${p.score} points: ${words}${p.bingo ? " (bingo)" : ""}`;
}

function showPreview() {
  const target = document.getElementById("preview");
  if (!target) return;
  target.textContent = previewText();
  target.classList.toggle("refusal", Boolean(page.preview?.refusal));
}

// --- drawing ----------------------------------------------------------------------

// The tiles not on the board and not on this rack: the bag and the other racks, as
// Woogles shows them beside the board (issue 24; games/scrabble/view.py, unseen).
function unseenTiles(view) {
  const u = view.unseen;
  if (!u) return null;
  const letters = Object.entries(u.tiles).map(([t, n]) =>
    el("span", { class: t === "?" ? "unseen-letter blank" : "unseen-letter", "data-letter": t, title: `${n} × ${t === "?" ? "blank" : t}` },
      (t === "?" ? "?" : t).repeat(n)));
  const inRacks = u.count - view.bag;
  return el("section", { class: "unseen", "aria-label": "Unseen tiles" },
    el("h3", {}, `Unseen: ${u.count} `, el("small", {}, `(${view.bag} in the bag, ${inRacks} on other racks)`)),
    el("p", { class: "unseen-letters" }, letters.flatMap((s) => [s, " "]),
      u.random ? el("span", { class: "unseen-random" }, `+ ${u.random} random`) : null));
}

export function drawGame(view) {
  const board = document.querySelector("#board .sboard");
  for (const [x, y, t] of page.placed) {
    const sq = board.querySelector(`[data-x="${x}"][data-y="${y}"]`);
    const blank = t !== t.toUpperCase();
    sq.replaceChildren(el("span", {
      class: blank ? "tile blank tent" : "tile tent", "data-tent": "", "aria-label": `${t.toUpperCase()}${blank ? " (blank)" : ""}, not sent yet`,
      onpointerdown: (event) => grab(event, { x, y, tile: t }),
    }, t.toUpperCase()));
  }
  if (page.cursor) {
    const [x, y] = page.cursor;
    board.querySelector(`[data-x="${x}"][data-y="${y}"]`)?.classList.add(page.down ? "cursor-down" : "cursor");
  }
  if (page.choosing) {
    const [x, y] = page.choosing;
    board.querySelector(`[data-x="${x}"][data-y="${y}"]`)?.classList.add("choosing");
  }
  board.addEventListener("click", (event) => {
    if (dragged) return;
    const sq = event.target.closest(".sq");
    if (!sq) return;
    const at = [Number(sq.dataset.x), Number(sq.dataset.y)];
    if (page.cursor && page.cursor[0] === at[0] && page.cursor[1] === at[1]) page.down = !page.down;
    else { page.cursor = at; page.down = false; }
    draw();
  });
  const left = rackLeft();
  const rack = el("div", { class: "rack", role: "group", "aria-label": "Your rack (drag a tile to the board, or click a square, then a tile or type)" },
    left.map((t, i) => el("span", {
      class: t === "?" ? "rtile blank" : "rtile", role: "button", tabindex: 0, "data-index": i, "data-tile": t,
      "aria-label": `${t === "?" ? "blank" : t}: put at the cursor`,
      onpointerdown: (event) => grab(event, { index: i, tile: t }),
      onkeydown: (event) => { if (event.key === "Enter" || event.key === " ") { tapRack(t); event.preventDefault(); event.stopPropagation(); } },
    }, t === "?" ? " " : t)));
  // "parts": on a phone the rack comes first and the unseen tiles after the moves (CSS).
  replaceChildren("mine", el("div", { class: "parts" },
    el("p", { class: "rack-line" }, "Your rack: ", rack, " ", button("Shuffle", shuffle, "shuffle")),
    page.choosing ? chooser() : null, unseenTiles(view)));
  const exchange = el("input", { id: "exchange", placeholder: "tiles to exchange", size: 8, maxlength: 7 });
  replaceChildren("controls", el("div", {}, challengeLine(view),
    el("p", { class: "play-line" }, button("Play", sendPlacement, "send"), " ",
      el("span", { id: "preview", class: "preview", role: "status", "aria-live": "polite" })),
    el("p", {}, button("Clear", clear, "clear"), " ", button("Pass", () => play({ kind: "pass" }), "pass"), " ", exchange, " ",
      button("Exchange", () => play({ kind: "exchange", tiles: exchange.value.toUpperCase().replace(/[^A-Z?]/g, "") }), "exchange"))));
  showPreview();
}

// A table variant with challenges: the pending play may be challenged by any opponent
// of its player, and accepted by the player on turn (who may also just play on).
function challengeLine(view) {
  const pending = view.pending;
  if (!pending || view.over) return null;
  if (pending.player === view.you) return el("p", { class: "challenge-line" }, "Your play may be challenged.");
  return el("p", { class: "challenge-line", role: "group", "aria-label": "Challenge window" },
    `${view.players[pending.player]}'s play (${pending.score}) may be challenged: `,
    button("Challenge", () => play({ kind: "challenge" }), "challenge"),
    view.turn === view.you ? [" ", button("Accept", () => play({ kind: "accept" }), "accept")] : null);
}

function clear() {
  page.placed = [];
  page.choosing = null;
  changed();
  draw();
}

function sendPlacement() {
  if (page.placed.length) play({ kind: "place", tiles: page.placed });
}

// A rack tile clicked (or Enter on it): it goes to the cursor's square.
function tapRack(tile) {
  const view = page.view;
  if (!page.cursor) { status("Click a square first, or drag the tile there."); return; }
  const [x, y] = nextFree(view, ...page.cursor);
  if (x === null) return;
  if (tile !== "?") advance(x, y);
  else page.cursor = [x, y];
  putTile(tile, x, y);
}

// --- drag and drop (Pointer Events: mouse, pen and touch alike) -----------------------

let drag = null; // { source, ghost, startX, startY, moved }
let dragged = false; // a drag just ended: the click that follows it is not a click

function grab(event, source) {
  if (event.button !== 0 || page.choosing) return;
  event.preventDefault();
  drag = { source, ghost: null, startX: event.clientX, startY: event.clientY };
  window.addEventListener("pointermove", move);
  window.addEventListener("pointerup", drop);
  window.addEventListener("pointercancel", cancelDrag);
}

function move(event) {
  if (!drag) return;
  if (!drag.ghost) {
    if (Math.hypot(event.clientX - drag.startX, event.clientY - drag.startY) < 5) return;
    const t = drag.source.tile;
    drag.ghost = el("span", { class: "drag-ghost" }, t === "?" ? " " : t.toUpperCase());
    document.body.append(drag.ghost);
    document.body.classList.add("dragging");
  }
  drag.ghost.style.left = `${event.clientX}px`;
  drag.ghost.style.top = `${event.clientY}px`;
  for (const old of document.querySelectorAll(".drop-target")) old.classList.remove("drop-target");
  target(event)?.node.classList.add("drop-target");
}

// Where the pointer is: an empty square, or the rack (with the index to insert at).
function target(event) {
  const under = document.elementFromPoint(event.clientX, event.clientY);
  if (!under) return null;
  const sq = under.closest("#board .sq");
  if (sq) {
    const x = Number(sq.dataset.x), y = Number(sq.dataset.y);
    return isEmpty(page.view, x, y) ? { node: sq, square: [x, y] } : null;
  }
  // The whole rack line takes a tile back (the rack itself may be short).
  const line = under.closest("#mine .rack-line");
  if (!line) return null;
  const rack = line.querySelector(".rack");
  let index = 0;
  for (const t of rack.querySelectorAll(".rtile")) {
    const box = t.getBoundingClientRect();
    if (event.clientX > box.left + box.width / 2) index = Number(t.dataset.index) + 1;
  }
  return { node: rack, index };
}

function drop(event) {
  if (!drag) return;
  const { source, ghost } = drag;
  const spot = ghost ? target(event) : null;
  endDrag();
  if (!ghost) {
    // No movement: a plain click (a rack tile goes to the cursor).
    if (source.index !== undefined) tapRack(source.tile);
    return;
  }
  dragged = true;
  setTimeout(() => { dragged = false; }, 0);
  if (!spot) { draw(); return; }
  if (spot.square) {
    const [x, y] = spot.square;
    if (source.index !== undefined) { putTile(source.tile, x, y); return; }
    const i = placedAt(source.x, source.y);
    if (i >= 0) page.placed[i] = [x, y, page.placed[i][2]];
  } else {
    const left = rackLeft();
    let at = spot.index;
    if (source.index !== undefined) {
      left.splice(source.index, 1);
      if (at > source.index) at--;
      left.splice(at, 0, source.tile);
    } else {
      const i = placedAt(source.x, source.y);
      if (i >= 0) {
        page.placed.splice(i, 1);
        left.splice(at, 0, rackTile(source.tile));
      }
    }
    setLeft(left);
  }
  changed();
  draw();
}

function cancelDrag() { endDrag(); draw(); }

function endDrag() {
  drag?.ghost?.remove();
  drag = null;
  document.body.classList.remove("dragging");
  for (const old of document.querySelectorAll(".drop-target")) old.classList.remove("drop-target");
  window.removeEventListener("pointermove", move);
  window.removeEventListener("pointerup", drop);
  window.removeEventListener("pointercancel", cancelDrag);
}

// --- typing -----------------------------------------------------------------------

// Scrabble: click a square (again: the other direction; or the arrows and Space), type
// the letters (? opens the blank's chooser, or a letter you do not hold is played with a
// blank), Enter sends, Backspace takes back, Escape clears.
function nextFree(view, x, y) {
  while (x < view.size && y < view.size && !isEmpty(view, x, y)) { if (page.down) y++; else x++; }
  return x >= view.size || y >= view.size ? [null, null] : [x, y];
}

// The cursor stays on the board: past a tile typed on the last square it stays on that
// square (typing more places nothing; an arrow moves it from there, not from off the
// board, where it was not drawn and its first move went diagonally).
function advance(x, y) {
  const last = page.view.size - 1;
  page.cursor = page.down ? [x, Math.min(last, y + 1)] : [Math.min(last, x + 1), y];
}

function typeLetter(letter) {
  const view = page.view;
  if (!page.cursor) return;
  const left = rackLeft();
  let tile;
  if (!left.includes(letter)) {
    if (!left.includes("?")) { status(`No ${letter} on your rack.`); return; }
    tile = letter.toLowerCase();
  } else tile = letter;
  const [x, y] = nextFree(view, ...page.cursor);
  if (x === null) return;
  page.placed.push([x, y, tile]);
  advance(x, y);
  changed();
  draw();
}

function typeBlank() {
  const view = page.view;
  if (!page.cursor) return;
  if (!rackLeft().includes("?")) { status("No blank on your rack."); return; }
  const [x, y] = nextFree(view, ...page.cursor);
  if (x === null) return;
  page.cursor = [x, y];
  choose(x, y);
}

// The board without a mouse: the arrows move the cursor (from the centre), Space turns it.
const ARROWS = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
function moveCursor(dx, dy) {
  const n = page.view.size;
  const [x, y] = page.cursor ?? [Math.floor(n / 2) - dx, Math.floor(n / 2) - dy];
  page.cursor = [Math.min(n - 1, Math.max(0, x + dx)), Math.min(n - 1, Math.max(0, y + dy))];
  draw();
}

export function keydown(event) {
  if (event.target.tagName === "INPUT") return;
  if (page.choosing) {
    if (/^[a-zA-Z]$/.test(event.key)) { chosen(event.key.toUpperCase()); event.preventDefault(); }
    else if (event.key === "Escape") { cancelChoice(); event.preventDefault(); }
    return;
  }
  if (event.target.tagName === "BUTTON" && (event.key === "Enter" || event.key === " ")) return;
  if (/^[a-zA-Z]$/.test(event.key)) { typeLetter(event.key.toUpperCase()); event.preventDefault(); }
  else if (event.key === "?") { typeBlank(); event.preventDefault(); }
  else if (ARROWS[event.key]) { moveCursor(...ARROWS[event.key]); event.preventDefault(); }
  else if (event.key === " " && page.cursor) { page.down = !page.down; draw(); event.preventDefault(); }
  else if (event.key === "Enter") { sendPlacement(); event.preventDefault(); }
  else if (event.key === "Backspace") {
    const last = page.placed.pop();
    if (last) page.cursor = [last[0], last[1]];
    changed();
    draw(); event.preventDefault();
  } else if (event.key === "Escape") clear();
}
