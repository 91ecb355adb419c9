// The lobby and games pages: the lobby topic's snapshots rebuild the queue and room tables.
import { lexiconLabel } from "./wording.js";
import { watch } from "./ws.js";

function cell(tag, text, cls) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

// A table's variant and its own choices: "twente · GCIDE words · clock 25+0".
function variantText(q) {
  const own = q.settings ?? {};
  return [q.variant, own.lexicon ? `${lexiconLabel(own.lexicon)} words` : null,
    own.clock ? `clock ${own.clock}` : null].filter(Boolean).join(" · ");
}

// Each cell carries its column's name (data-label): at phone width the rows are cards.
function table(headers, rows) {
  const t = cell("table", undefined, "stack");
  const head = cell("tr");
  for (const [h, cls] of headers) head.append(cell("th", h, cls));
  t.append(cell("thead"), cell("tbody"));
  t.tHead.append(head);
  for (const r of rows) {
    [...r.children].forEach((td, i) => { if (headers[i]?.[0]) td.dataset.label = headers[i][0]; });
    t.tBodies[0].append(r);
  }
  return t;
}

function people(names, protocols) {
  const td = cell("td");
  names.forEach((n, i) => {
    if (i) td.append(", ");
    td.append(`${n} `, cell("small", `(${protocols[i]})`));
  });
  return td;
}

function queues(lobby) {
  const section = document.getElementById("queues");
  if (!section) return;
  const body = lobby.queues.length ? table(
    [["Game"], ["Seats"], ["Variant"], ["Waiting"], [""]],
    lobby.queues.map((q) => {
      const tr = cell("tr");
      const sit = cell("a", "sit here", "sit");
      sit.href = `/play?table=${encodeURIComponent(q.id)}`;
      const td = cell("td");
      td.append(sit);
      tr.append(cell("td", q.game), cell("td", `${q.waiting.length}/${q.players}`), cell("td", variantText(q)),
        people(q.waiting.map((w) => w.name), q.waiting.map((w) => w.protocol)), td);
      return tr;
    })) : emptyTables();
  section.replaceChildren(cell("h2", "Tables to join"), body);
}

function emptyTables() {
  const p = cell("p", "No table is open: ", "empty");
  const link = cell("a", "open one");
  link.href = "/play";
  p.append(link, ".");
  return p;
}

function rooms(lobby) {
  const section = document.getElementById("rooms");
  if (!section) return;
  const body = lobby.rooms.length ? table(
    [["Game"], ["Players"], ["Scores", "num"], ["Turn"], [""]],
    lobby.rooms.map((r) => {
      const tr = cell("tr");
      tr.dataset.uid = r.uid;
      const link = cell("a", "watch");
      link.href = `/games/${encodeURIComponent(r.uid)}`;
      const watchCell = cell("td");
      watchCell.append(link);
      tr.append(cell("td", r.game), people(r.players, r.protocols),
        cell("td", r.scores ? r.scores.join(" – ") : "—", "num"),
        cell("td", r.turn !== null && r.turn !== undefined ? r.players[r.turn] : "—"), watchCell);
      return tr;
    })) : cell("p", "No game is running.", "empty");
  section.replaceChildren(cell("h2", "Games to watch"), body);
}

function contest(snapshot) {
  const section = document.getElementById("contest");
  if (!section) return;
  const p = cell("p");
  p.append("State ", cell("b", snapshot.state));
  for (const b of snapshot.boards) {
    p.append(` · board ${b.board}: ${b.players.join(" v ")} ${b.scores.join(" – ")}`);
  }
  const link = cell("a", "console");
  link.href = "/cmpn402";
  p.append(" · ", link);
  section.replaceChildren(cell("h2", "CMPN402 referee"), p);
}

// A browser holding a seat's rejoin token (play.js keeps it) is shown the way back to
// its table first: close the tab, open the site, and you are back (issue 24).
if (localStorage.getItem("meeple.rejoin")) {
  const back = document.getElementById("back-to-table");
  if (back) back.hidden = false;
}

const topics = [{ topic: "lobby" }];
if (document.getElementById("contest")) topics.push({ topic: "console" });
watch(topics, (msg) => {
  if (msg.type === "console") { contest(msg.data); return; }
  if (msg.type !== "lobby") return;
  queues(msg.data);
  rooms(msg.data);
  trouble(msg.data.store);
});

// The store's banner (docs/durability.md, Faults): shown while writes fail, gone after.
function trouble(text) {
  const banner = document.getElementById("store-trouble");
  if (!banner) return;
  banner.textContent = text || "";
  banner.hidden = !text;
}

// "Play X now" with the options chosen above it (issue 34): the bot's level, a clock the
// game takes, Santorini's gods; the links stay plain links (no choice: the defaults).
const quickOptions = document.getElementById("quick-options");
function quickLinks() {
  const level = quickOptions.querySelector("[name=level]").value;
  const clock = quickOptions.querySelector("[name=clock]").selectedOptions[0];
  const gods = quickOptions.querySelector("[name=gods]").checked;
  for (const link of document.querySelectorAll("#play-now a[data-game]")) {
    const game = link.dataset.game;
    link.dataset.plain ??= link.getAttribute("href");
    const fits = clock?.value && (!clock.dataset.games || clock.dataset.games.split(" ").includes(game));
    const extra = [level !== "hard" ? `level=${encodeURIComponent(level)}` : null,
      fits ? `clock=${encodeURIComponent(clock.value)}` : null,
      gods && game === "santorini" ? "gods=1" : null].filter(Boolean);
    link.setAttribute("href", [link.dataset.plain, ...extra].join("&"));
  }
}
if (quickOptions) {
  quickOptions.addEventListener("change", quickLinks);
  quickLinks();
}

// "Play a person" with a wait after which the play page offers a bot (issue 34).
const seekBot = document.getElementById("seek-bot");
function seekLinks() {
  for (const link of document.querySelectorAll("#seek a.seek")) {
    link.dataset.plain ??= link.getAttribute("href");
    link.setAttribute("href", link.dataset.plain + (seekBot.value ? `&botafter=${seekBot.value}` : ""));
  }
}
if (seekBot) {
  seekBot.addEventListener("change", seekLinks);
  seekLinks();
}
