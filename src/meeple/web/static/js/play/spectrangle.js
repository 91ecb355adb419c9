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

export function drawGame(view) {
  const hand = view.hands[view.you] ?? [];
  if (page.tile && !hand.some((t) => sameTile(t, page.tile))) page.tile = null;
  replaceChildren("mine", el("p", { class: "hand" }, "Your hand: ", hand.map((t) =>
    button(page.tile && sameTile(t, page.tile) ? page.tile : t, () => { page.tile = t; draw(); },
      page.tile && sameTile(t, page.tile) ? "mini picked" : "mini"))));
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
