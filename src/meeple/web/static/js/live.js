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

const socket = watch([{ topic: "game", uid, delta: true }], (msg) => {
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
  onError: (msg) => {
    if (msg.code === "not-found") location.reload();
    else document.getElementById("watch-chat-status").textContent = msg.message ?? "";
  },
  onMessage: (msg) => { if (msg.type === "watch-chat" && msg.uid === uid) watchChatLine(msg); },
  onOpen: () => { document.getElementById("watch-chat").hidden = false; },
});

// --- the spectators' chat (issue 34.5) ----------------------------------------------------
// Apart from the players' chat: whoever watches reads and writes it under a name of their
// choosing (kept per browser); the players do not see it during the game. Lines are text
// nodes, never HTML.
const NAME = "meeple.watch-name";
const form = document.getElementById("watch-chat");
form.elements.name.value = localStorage.getItem(NAME) ?? "";
form.addEventListener("submit", (event) => {
  event.preventDefault();
  const name = form.elements.name.value.trim();
  const text = form.elements.text.value;
  if (!name || !text.trim()) return;
  localStorage.setItem(NAME, name);
  document.getElementById("watch-chat-status").textContent = "";
  socket.send({ type: "watch-chat", uid, name, text });
  form.elements.text.value = "";
});

function watchChatLine(msg) {
  const log = document.getElementById("watch-chat-log");
  const line = document.createElement("p");
  line.className = msg.from === form.elements.name.value.trim() ? "line mine" : "line";
  const from = document.createElement("span");
  from.className = "from";
  from.textContent = msg.from;
  line.append(from, " ", msg.text);
  log.append(line);
  while (log.childElementCount > 200) log.firstElementChild.remove();
  log.scrollTop = log.scrollHeight;
}
