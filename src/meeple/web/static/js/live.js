// The live game page: it asks for deltas (docs/protocols/web.md, "Deltas"): the whole
// snapshot on joining, then only what changed; every new state redraws board, panel, log.
import { follow } from "./delta.js";
import { showClocks } from "./clocks.js";
import { renderBoard, renderMoves, renderPanel, replaceChildren } from "./render.js";
import { watch } from "./ws.js";

const game = document.getElementById("game");
const uid = game.dataset.uid;
let seq = Number(game.dataset.seq);
let data = null; // the snapshot at seq, once the server has sent one whole
// The clocks as the page was made (the snapshot's are as of its last move).
{
  const box = document.getElementById("clocks");
  const clocks = JSON.parse(box.dataset.clocks || "null");
  if (clocks) showClocks("clocks", clocks, JSON.parse(game.dataset.players));
}

watch([{ topic: "game", uid, delta: true }], (msg) => {
  if (msg.type !== "game" || msg.uid !== uid) return;
  const next = follow(data, seq, msg);
  if (next === null) return;
  const redraw = msg.seq > seq;
  data = next;
  seq = msg.seq;
  game.dataset.seq = String(seq);
  if (!redraw) return; // the page was rendered from this very snapshot
  const view = data.view;
  if (view) {
    replaceChildren("board", renderBoard(view));
    replaceChildren("panel", renderPanel(view));
    const moves = renderMoves(view);
    replaceChildren("moves", moves);
    moves.scrollTop = moves.scrollHeight;
  }
  showClocks("clocks", data.clocks ?? null, data.players);
  if (data.finished) document.getElementById("ended").hidden = false;
}, {
  // The game ended and was stored between page load and subscribing: show the replay.
  onError: (msg) => { if (msg.code === "not-found") location.reload(); },
});
