// The live game page: every snapshot of the game's topic redraws board, panel and log.
import { renderBoard, renderMoves, renderPanel, replaceChildren } from "./render.js";
import { watch } from "./ws.js";

const game = document.getElementById("game");
const uid = game.dataset.uid;
let seq = Number(game.dataset.seq);

watch([{ topic: "game", uid }], (msg) => {
  if (msg.type !== "game" || msg.uid !== uid || msg.seq <= seq) return;
  seq = msg.seq;
  game.dataset.seq = String(seq);
  const view = msg.data.view;
  if (view) {
    replaceChildren("board", renderBoard(view));
    replaceChildren("panel", renderPanel(view));
    const moves = renderMoves(view);
    replaceChildren("moves", moves);
    moves.scrollTop = moves.scrollHeight;
  }
  if (msg.data.finished) document.getElementById("ended").hidden = false;
}, {
  // The game ended and was stored between page load and subscribing: show the replay.
  onError: (msg) => { if (msg.code === "not-found") location.reload(); },
});
