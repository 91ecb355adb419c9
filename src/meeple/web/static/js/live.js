// The live game page: it asks for deltas (docs/protocols/web.md, "Deltas"): the whole
// snapshot on joining, then only what changed; every new state redraws board, panel, log.
import { renderBoard, renderMoves, renderPanel, replaceChildren } from "./render.js";
import { watch } from "./ws.js";

const game = document.getElementById("game");
const uid = game.dataset.uid;
let seq = Number(game.dataset.seq);
let data = null; // the snapshot at seq, once the server has sent one whole

// The game's next state from a frame: a whole snapshot, or a delta (an RFC 6902 patch:
// add, remove, replace) on the one we hold. Null for a frame that is not newer; the
// server sends a delta only on top of the snapshot it last sent us.
export function follow(held, heldSeq, msg) {
  if (msg.seq <= heldSeq && held !== null) return null;
  if (msg.patch === undefined) return msg.data;
  if (held === null || msg.base !== heldSeq) return null;
  const doc = structuredClone(held);
  for (const op of msg.patch) {
    const keys = op.path.split("/").slice(1).map((k) => k.replaceAll("~1", "/").replaceAll("~0", "~"));
    const last = keys.pop();
    let node = doc;
    for (const k of keys) node = node[Array.isArray(node) ? Number(k) : k];
    if (Array.isArray(node)) {
      if (op.op === "remove") node.splice(Number(last), 1);
      else if (op.op === "add" && last === "-") node.push(op.value);
      else if (op.op === "add") node.splice(Number(last), 0, op.value);
      else node[Number(last)] = op.value;
    } else if (op.op === "remove") delete node[last];
    else node[last] = op.value;
  }
  return doc;
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
  if (data.finished) document.getElementById("ended").hidden = false;
}, {
  // The game ended and was stored between page load and subscribing: show the replay.
  onError: (msg) => { if (msg.code === "not-found") location.reload(); },
});
