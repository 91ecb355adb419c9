// The Spectrangle part of the play page.
import { button, draw, el, page, play } from "./page.js";
import { replaceChildren } from "../render.js";

Object.assign(page, { tile: null });
export function newView() {}

// Spectrangle: pick a tile from your hand, rotate it, click a field to place it.
function rotate(tile) { return tile[2] + tile[0] + tile[1] + tile.slice(3); }

export function drawGame(view) {
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

