// The Santorini part of the play page, driven by the seat view's "legal": what the
// engine says this seat may do now (games/santorini/view.py, legal_view). Nothing here
// knows a god: Atlas' dome on a low level is one more build on a cell, Artemis' second
// move a move after a move, Prometheus' build before moving a build where a move may
// come first. The page only shows those steps and sends the one clicked.
import { button, draw, el, page, play } from "./page.js";
import { replaceChildren } from "../render.js";

// The selected worker's cell, and the cell whose inline choice is open (several steps
// end there: a move and a build, or a block and a dome). autoEndMs: the window to undo
// in before a finished turn ends by itself (tests shorten it).
Object.assign(page, { worker: null, choice: null, autoEndMs: 3000 });

// A turn with nothing left to do but end ends by itself after page.autoEndMs, unless
// Undo comes first (issue 24). One pending end, for the view that allowed it.
let autoEnd = null;
function cancelAutoEnd() {
  if (autoEnd) { clearTimeout(autoEnd.timer); clearInterval(autoEnd.tick); }
  autoEnd = null;
}
function onlyEndLeft(legal) {
  return Boolean(legal?.pass) && !legal.moves.length && !legal.builds.length;
}
function scheduleAutoEnd(view) {
  if (autoEnd?.view === view) return;
  cancelAutoEnd();
  const until = Date.now() + page.autoEndMs;
  autoEnd = { view, until,
    timer: setTimeout(() => { cancelAutoEnd(); play({ kind: "pass" }); }, page.autoEndMs),
    tick: setInterval(() => {
      const left = document.getElementById("auto-end-left");
      if (left) left.textContent = secondsLeft(until);
    }, 250) };
}
function secondsLeft(until) { return String(Math.max(0, Math.ceil((until - Date.now()) / 1000))); }

function rowCol(c) { return [Math.floor(c / 5), c % 5]; }
function square(c) { return `${"abcde"[c % 5]}${Math.floor(c / 5) + 1}`; }

// The cells of workers that may take a step now.
function sources(legal) {
  return new Set([...(legal?.moves ?? []), ...(legal?.builds ?? [])].map((s) => s[0]));
}

// Where the worker on `from` may go or build: cell -> the steps ending there.
function targets(legal, from) {
  const out = new Map();
  const at = (c) => { if (!out.has(c)) out.set(c, []); return out.get(c); };
  for (const [a, b] of legal?.moves ?? []) {
    if (a === from) at(b).push({ kind: "move", from: rowCol(a), to: rowCol(b) });
  }
  for (const [a, b, level] of legal?.builds ?? []) {
    if (a === from) at(b).push({ kind: "build", from: rowCol(a), to: rowCol(b), level });
  }
  return out;
}

// A new view keeps the selected worker while it may still act; when one worker alone
// may (the turn's worker after its move, say), that one is selected.
export function newView(before, view) {
  page.choice = null;
  if (autoEnd && autoEnd.view !== view) cancelAutoEnd();
  const from = sources(view.legal);
  if (!from.has(page.worker)) page.worker = null;
  if (page.worker === null && from.size === 1) page.worker = [...from][0];
}

// A refused step did not happen; the next view says what is legal.
export function refused() { page.choice = null; }

export function keydown(event) {
  if (event.key === "Escape" && (page.choice !== null || page.worker !== null)) {
    page.choice = null;
    page.worker = null;
    draw();
  }
}

function stepLabel(step) {
  if (step.kind === "move") return "Move";
  return step.level === 4 ? "Dome" : "Block";
}

function stepTitle(step, view) {
  const c = step.to[0] * 5 + step.to[1];
  if (step.kind === "move") return `move to ${square(c)}`;
  if (step.level === 4) return `build a dome on ${square(c)} (level ${view.levels[c]})`;
  return `build level ${step.level} on ${square(c)}`;
}

// Each god with its power in words under the button (touch has no hover: issue 24).
function godButtons(view, names) {
  return el("ul", { class: "gods" }, names.map((g) => el("li", {},
    button(g, () => play({ kind: "god", god: g }), "god"),
    el("p", { class: "power" }, view.powers?.[g] ?? ""))));
}

function setupControls(view, legal) {
  if (view.phase === "pool") return [el("p", {}, "Offer a god:"), godButtons(view, legal.gods)];
  if (view.phase === "gods") return [el("p", {}, "Take a god:"), godButtons(view, legal.gods)];
  if (view.phase === "starter") {
    return [el("p", {}, "Who starts? ", legal.starters.map((i) =>
      button(view.players[i], () => play({ kind: "starter", player: i }), "starter")))];
  }
  return [];
}

function playControls(view, legal) {
  const row = [];
  let note = null;
  if (onlyEndLeft(legal)) {
    // Nothing optional remains: the turn ends by itself; Undo stops it.
    scheduleAutoEnd(view);
    note = el("p", { class: "note auto-end", role: "status" }, "Turn ends in ",
      el("span", { id: "auto-end-left" }, secondsLeft(autoEnd.until)), " s — Undo to take it back.");
    row.push(button("End turn now", () => { cancelAutoEnd(); play({ kind: "pass" }); }, "pass end-now"));
  } else if (legal.pass) {
    // An optional step remains (Prometheus, Artemis, Demeter, Hephaestus, …).
    row.push(button("End turn", () => play({ kind: "pass" }), "pass end-turn"));
  }
  if (legal.undo) {
    row.push(button("Undo", () => { cancelAutoEnd(); play({ kind: "undo", all: false }); }, "undo"));
    row.push(button("Undo turn", () => { cancelAutoEnd(); play({ kind: "undo", all: true }); }, "undo-all"));
  }
  const stuck = !legal.moves.length && !legal.builds.length && !legal.pass;
  // Stuck without a way to finish the turn, giving up is the one thing left to do; at
  // any other time Resign (the page's, for every game) does it, after asking.
  if (legal.lose && stuck) row.push(button("Give up", () => play({ kind: "lose" }), "lose"));
  return [note, el("p", { class: "controls" }, row),
    stuck ? el("p", { class: "note stuck" }, "No way to complete a turn: you can only give up.") : null];
}

function hint(view, legal) {
  if (!legal) return "";
  if (view.phase === "place") return "Click a highlighted cell to place a worker.";
  if (view.phase !== "play") return "";
  if (page.worker === null) return sources(legal).size ? "Click one of your ringed workers." : "";
  const where = targets(legal, page.worker);
  const moves = [...where.values()].some((s) => s.some((x) => x.kind === "move"));
  const builds = [...where.values()].some((s) => s.some((x) => x.kind === "build"));
  const what = [moves ? "solid green: move" : null, builds ? "dashed orange: build" : null].filter(Boolean);
  return `Worker on ${square(page.worker)}${what.length ? ` — ${what.join(" · ")}` : ""}.`;
}

// Mark the cells the seat may use: placement cells, workers that may act, and the
// selected worker's moves and builds, with the inline choice where several steps meet.
function decorate(view, legal) {
  const cells = document.querySelectorAll("#board .tboard .cell");
  if (!legal) return;
  if (view.phase === "place") {
    for (const c of legal.place) cells[c].classList.add("can-place");
    return;
  }
  for (const c of sources(legal)) cells[c].classList.add("can-select");
  if (page.worker === null) return;
  cells[page.worker].classList.add("selected");
  for (const [c, steps] of targets(legal, page.worker)) {
    if (steps.some((s) => s.kind === "move")) cells[c].classList.add("can-move");
    if (steps.some((s) => s.kind === "build")) cells[c].classList.add("can-build");
    if (page.choice === c) {
      cells[c].append(el("div", { class: "choice", role: "group", "aria-label": "choose a step" },
        steps.map((s) => {
          const b = button(stepLabel(s), (event) => { event.stopPropagation(); page.choice = null; play(s); },
            `step ${s.kind}`);
          b.dataset.kind = s.kind;
          if (s.kind === "build") b.dataset.level = s.level;
          b.title = stepTitle(s, view);
          return b;
        })));
    }
  }
}

function clicked(view, legal, c) {
  if (view.phase === "place") {
    if (legal.place.includes(c)) play({ kind: "place", cell: rowCol(c) });
    return;
  }
  if (view.phase !== "play") return;
  const steps = page.worker === null ? undefined : targets(legal, page.worker).get(c);
  if (steps && (!sources(legal).has(c) || c === page.worker)) {
    if (steps.length === 1) { page.choice = null; play(steps[0]); return; }
    page.choice = page.choice === c ? null : c;
  } else if (sources(legal).has(c)) {
    page.worker = page.worker === c ? null : c;
    page.choice = null;
  } else {
    page.choice = null;
  }
  draw();
}

export function drawGame(view) {
  const legal = view.over ? null : view.legal;
  const controls = [];
  if (!legal) cancelAutoEnd();
  if (legal) controls.push(...(view.phase === "play" ? playControls(view, legal) : setupControls(view, legal)));
  replaceChildren("controls", el("div", {}, controls));
  replaceChildren("mine", el("p", { class: "hint" }, hint(view, legal)));
  decorate(view, legal);
  const board = document.querySelector("#board .tboard");
  board.addEventListener("click", (event) => {
    const cell = event.target.closest(".cell");
    if (!cell || !legal || event.target.closest(".choice")) return;
    page.keyboard = false;
    clicked(view, legal, Number(cell.dataset.cell));
  });
  // Keyboard (issue 24): every cell that can be used now is in the tab order; Enter or
  // Space uses it like a click. After a redraw the focus comes back where it was (or to
  // the first usable cell, or the inline choice), so play goes on without the mouse.
  const usable = board.querySelectorAll(".can-place, .can-select, .can-move, .can-build, .selected");
  for (const cell of usable) {
    cell.tabIndex = 0;
    cell.addEventListener("keydown", (event) => {
      if ((event.key !== "Enter" && event.key !== " ") || event.target !== cell || !legal) return;
      event.preventDefault();
      page.keyboard = true;
      page.focus = Number(cell.dataset.cell);
      clicked(view, legal, page.focus);
    });
  }
  if (page.keyboard && legal) {
    const choice = board.querySelector(".choice button");
    const again = board.querySelector(`.cell[data-cell="${page.focus}"][tabindex]`);
    (choice ?? again ?? usable[0] ?? document.querySelector("#controls button"))?.focus();
  }
}
