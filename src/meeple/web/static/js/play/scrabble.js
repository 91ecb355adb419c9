// The Scrabble part of the play page.
import { button, draw, el, page, play, status } from "./page.js";
import { replaceChildren } from "../render.js";

// Typed tiles last until someone moves (in a lone Clarkson game the turn stays put).
Object.assign(page, { cursor: null, down: false, placed: [], blankNext: false });
export function newView(before, view) {
  if (!before || before.turn !== view.turn || before.moves.length !== view.moves.length) page.placed = [];
}

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

export function drawGame(view) {
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

export function keydown(event) {
  if (event.target.tagName === "INPUT") return;
  if (/^[a-zA-Z]$/.test(event.key)) { typeLetter(event.key.toUpperCase()); event.preventDefault(); }
  else if (event.key === "?") { page.blankNext = true; event.preventDefault(); }
  else if (event.key === "Enter") { sendPlacement(); event.preventDefault(); }
  else if (event.key === "Backspace") {
    const last = page.placed.pop();
    if (last) page.cursor = [last[0], last[1]];
    draw(); event.preventDefault();
  } else if (event.key === "Escape") { page.placed = []; draw(); }
}

