// The Spectrangle part of the play page.
import { button, draw, el, page, play, status } from "./page.js";
import { replaceChildren } from "../render.js";

Object.assign(page, { tile: null });
export function newView() {}

// Spectrangle: pick a tile from your hand, rotate it; the fields where it fits (the seat
// view's "fits", from the engine) are highlighted with the points it would score there;
// click one to place it.
function rotate(tile) { return tile[2] + tile[0] + tile[1] + tile.slice(3); }

const SVG = "http://www.w3.org/2000/svg";

// The picked tile's fields, in the shown rotation: {field: points}.
function fitsOf(view) {
  if (!page.tile || view.turn !== view.you) return new Map();
  return new Map((view.fits?.[page.tile] ?? []).map(([field, points]) => [field, points]));
}

function highlight(view, fits) {
  for (const [field, points] of fits) {
    const group = document.querySelector(`#board .field[data-field="${field}"]`);
    if (!group) continue;
    group.classList.add("fit");
    const label = group.querySelector("text");
    const text = document.createElementNS(SVG, "text");
    text.setAttribute("class", "pts");
    text.setAttribute("x", label?.getAttribute("x") ?? "0");
    text.setAttribute("y", label?.getAttribute("y") ?? "0");
    text.textContent = `+${points}`;
    label?.remove();
    group.append(text);
  }
}

// A hand tile drawn as on the board (issue 24): an upright triangle whose three sides
// (bottom, left, right: the code's order on an upright field) have the code's colours,
// its value in the middle. Rotate recolours the sides, so the turn is seen.
const COLOUR_NAMES = { R: "red", G: "green", B: "blue", Y: "yellow", P: "purple", W: "white" };
function tileSvg(code) {
  const p0 = [0, 52], p1 = [60, 52], p2 = [30, 0], c = [30, 52 * 2 / 3];
  const sides = [[p0, p1], [p0, p2], [p2, p1]];
  const root = document.createElementNS(SVG, "svg");
  root.setAttribute("viewBox", "-2 -2 64 56");
  root.setAttribute("class", "htile");
  root.setAttribute("aria-hidden", "true");
  sides.forEach(([a, b], s) => {
    const poly = document.createElementNS(SVG, "polygon");
    poly.setAttribute("class", `c-${code[s]}`);
    poly.setAttribute("points", [a, b, c].map(([x, y]) => `${x},${y}`).join(" "));
    root.append(poly);
  });
  const value = document.createElementNS(SVG, "text");
  value.setAttribute("x", "30");
  value.setAttribute("y", "41");
  value.setAttribute("class", "val");
  value.textContent = code.slice(3);
  root.append(value);
  return root;
}

function tileWords(code) {
  return `${[...code.slice(0, 3)].map((k) => COLOUR_NAMES[k] ?? k).join(", ")}, worth ${code.slice(3)}`;
}

// Drag a hand tile onto a field where it fits (Pointer Events: mouse, pen, touch).
let drag = null;
function startDrag(event, code) {
  if (event.button !== undefined && event.button !== 0) return;
  page.tile = code;
  const ghost = tileSvg(code);
  ghost.classList.add("drag-ghost");
  document.body.append(ghost);
  drag = { ghost, code, x: event.clientX, y: event.clientY, moved: false };
  moveGhost(event);
  event.preventDefault();
}
function moveGhost(event) {
  if (!drag) return;
  if (Math.abs(event.clientX - drag.x) + Math.abs(event.clientY - drag.y) > 4) drag.moved = true;
  drag.ghost.style.left = `${event.clientX - 24}px`;
  drag.ghost.style.top = `${event.clientY - 24}px`;
}
function endDrag(event) {
  if (!drag) return;
  const { ghost, code, moved } = drag;
  drag = null;
  ghost.remove();
  if (!moved) { draw(); return; } // a tap picks the tile
  const field = document.elementFromPoint(event.clientX, event.clientY)?.closest?.(".field");
  placeOn(page.view, code, field);
}
document.addEventListener("pointermove", moveGhost);
document.addEventListener("pointerup", endDrag);
document.addEventListener("pointercancel", () => { drag?.ghost.remove(); drag = null; });

function placeOn(view, code, field) {
  if (!field || view.turn !== view.you) { draw(); return; }
  const fits = new Map((view.fits?.[code] ?? []).map(([f, points]) => [f, points]));
  const index = Number(field.dataset.field);
  if (!fits.has(index)) {
    status(`${code} does not fit on field ${index} in this rotation`);
    draw();
    return;
  }
  play({ kind: "place", tile: code, index });
}

// --- keyboard reach (issue 34) -----------------------------------------------------------
// The hand and the fields where the picked tile fits are one Tab stop each (a roving
// tabindex: the arrow keys move within them), and keys reach them from anywhere on the
// page: 1–4 pick that hand tile, R rotates it, F goes to its best field; Enter or Space
// places it there. A redraw (every view, every pick) puts the focus back where it was,
// so a keyboard player never starts again from the top of the page.
let focusWas = null; // what had the focus: {hand: i}, {field: n} or {control: "rotate"}
document.addEventListener("focusin", (event) => {
  const t = event.target;
  if (t.closest?.("#mine .htile-btn")) focusWas = { hand: Number(t.dataset.index) };
  else if (t.closest?.("#board .field.fit")) focusWas = { field: Number(t.dataset.field) };
  else if (t.closest?.("#controls button")) focusWas = { control: t.className };
  else focusWas = null;
});

function refocus(fits) {
  if (!focusWas || (document.activeElement && document.activeElement !== document.body)) return;
  let target = null;
  if (focusWas.hand !== undefined) target = document.querySelector(`#mine .htile-btn[data-index="${focusWas.hand}"]`);
  else if (focusWas.field !== undefined) {
    target = document.querySelector(`#board .field.fit[data-field="${focusWas.field}"]`)
      ?? document.querySelector("#board .field.fit[tabindex='0']");
  } else if (focusWas.control) target = document.querySelector(`#controls button.${focusWas.control.split(" ")[0]}`);
  // The field it was on is gone (placed, or the turn passed): back to the hand.
  (target ?? (fits.size ? null : document.querySelector("#mine .htile-btn[tabindex='0']")))?.focus();
}

function best(fits) {
  let top = null;
  for (const [field, points] of fits) if (top === null || points > fits.get(top)) top = field;
  return top;
}

// Arrows within a roving group: the hand's tiles, or the fields that fit.
function rove(event, selector) {
  const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[event.key];
  const items = [...document.querySelectorAll(selector)];
  const at = items.indexOf(event.target);
  if (!step || at < 0) return false;
  const next = items[(at + step + items.length) % items.length];
  for (const item of items) item.setAttribute("tabindex", item === next ? "0" : "-1");
  next.focus();
  event.preventDefault();
  return true;
}

export function keydown(event) {
  if (event.target.closest?.("input, textarea, select") || event.altKey || event.ctrlKey || event.metaKey) return;
  const view = page.view;
  if (!view || view.over) return;
  if (rove(event, "#mine .htile-btn") || rove(event, "#board .field.fit")) return;
  const hand = view.hands[view.you] ?? [];
  const n = Number(event.key);
  if (Number.isInteger(n) && n >= 1 && n <= hand.length) {
    page.tile = hand[n - 1];
    focusWas = { hand: n - 1 };
    document.activeElement?.blur?.();
    draw();
  } else if ((event.key === "r" || event.key === "R") && page.tile) {
    page.tile = rotate(page.tile);
    if (!focusWas) focusWas = { hand: hand.findIndex((t) => sameTile(t, page.tile)) };
    document.activeElement?.blur?.();
    draw();
  } else if ((event.key === "f" || event.key === "F") && page.tile) {
    document.querySelector("#board .field.fit[tabindex='0']")?.focus();
  } else return;
  event.preventDefault();
}

export function drawGame(view) {
  const hand = view.hands[view.you] ?? [];
  if (page.tile && !hand.some((t) => sameTile(t, page.tile))) page.tile = null;
  const picked = Math.max(0, hand.findIndex((t) => page.tile && sameTile(t, page.tile)));
  replaceChildren("mine", el("div", { class: "hand", role: "group", "aria-label": "Your hand (1–4 pick, R rotates, F goes to the best field)" }, "Your hand: ", hand.map((t, i) => {
    const shown = page.tile && sameTile(t, page.tile) ? page.tile : t;
    const b = el("button", {
      type: "button", class: page.tile && sameTile(t, page.tile) ? "htile-btn picked" : "htile-btn",
      // The name starts with what the button shows (the value, then the code).
      "data-tile": shown, "data-index": String(i), tabindex: i === picked ? "0" : "-1",
      "aria-label": `${shown.slice(3)} ${shown}: ${tileWords(shown)}`, "aria-pressed": String(shown === page.tile),
      "aria-keyshortcuts": String(i + 1),
      onclick: () => { page.tile = shown; draw(); },
      onpointerdown: (event) => startDrag(event, shown),
    }, tileSvg(shown), " ", el("span", { class: "code" }, shown));
    return b;
  })));
  const fits = fitsOf(view);
  let hint = "";
  if (page.tile && view.turn === view.you) {
    hint = fits.size ? `${page.tile} fits on ${fits.size} field${fits.size === 1 ? "" : "s"}`
      : `${page.tile} fits nowhere in this rotation`;
  }
  replaceChildren("controls", el("div", {}, el("p", {},
    button("Rotate", () => { if (page.tile) { page.tile = rotate(page.tile); draw(); } }, "rotate"), " ",
    button("Exchange", () => { if (page.tile) play({ kind: "exchange", tile: page.tile }); }, "exchange"), " ",
    button("Skip", () => play({ kind: "skip" }), "skip")),
    el("p", { class: "fits-hint" }, hint)));
  highlight(view, fits);
  // Keyboard: the fields where the picked tile fits are one Tab stop, the best first.
  const top = best(fits);
  for (const field of document.querySelectorAll("#board .field.fit")) {
    field.setAttribute("tabindex", Number(field.dataset.field) === top ? "0" : "-1");
    field.setAttribute("role", "button");
    // The name holds what the field shows (its points), as WCAG's label-in-name asks.
    const points = fits.get(Number(field.dataset.field));
    field.setAttribute("aria-label", `place ${page.tile} on field ${field.dataset.field}: +${points}`);
    field.addEventListener("keydown", (event) => {
      if (event.key !== "Enter" && event.key !== " ") return;
      event.preventDefault();
      placeOn(view, page.tile, field);
    });
  }
  refocus(fits);
  document.querySelector("#board .rboard").addEventListener("click", (event) => {
    const field = event.target.closest(".field");
    if (!field || !page.tile || view.turn !== view.you) return;
    if (!field.classList.contains("fit")) {
      status(`${page.tile} does not fit on field ${field.dataset.field}`);
      return;
    }
    play({ kind: "place", tile: page.tile, index: Number(field.dataset.field) });
  });
}

function sameTile(a, b) {
  const r1 = rotate(a), r2 = rotate(r1);
  return [a, r1, r2].includes(b);
}
