// The Santorini part of the play page.
import { button, draw, el, page, play } from "./page.js";
import { replaceChildren } from "../render.js";

// A Santorini turn is several actions: the worker moved stays selected for its build,
// until the turn or the phase changes.
Object.assign(page, { worker: null, moved: false, dome: false });
export function newView(before, view) {
  if (!before || before.turn !== view.turn || before.phase !== view.phase) refused();
}
// A refused step did not happen.
export function refused() { page.worker = null; page.moved = false; }

// Santorini: gods and the starter by buttons; a worker is placed by clicking a cell;
// in play click a worker, then where it moves, then where it builds (Dome: a dome).
function rowCol(c) { return [Math.floor(c / 5), c % 5]; }

export function drawGame(view) {
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

