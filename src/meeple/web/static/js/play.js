// The play page (issue 13): sit at a lobby table and play over meeple-web/1
// (docs/protocols/web.md, "Playing"). Every "seat" message is the whole game as this seat
// sees it; the page redraws from it and keeps only what is being typed or clicked.
import { showClocks } from "./clocks.js";
import { renderBoard, renderMoves, renderPanel, replaceChildren } from "./render.js";
import { PROTOCOL } from "./ws.js";

import { el, onRedraw, page, send, status } from "./play/page.js";
import { lexiconLabel } from "./wording.js";
import { turnAlert } from "./play/alert.js";
import { fit, fitSoon } from "./play/fit.js";

// The rejoin token is kept per browser (localStorage), so a new tab or a reload takes
// the seat back. The page plays with its own copy (page.token): another tab may since
// have stored another seat's, and a page never forgets a token it does not hold.
const TOKEN = "meeple.rejoin";
page.token = localStorage.getItem(TOKEN);
// The lobby's "sit here" link names a table: /play?table=table-3. Its "Play X now"
// buttons name a game and a bot: /play?game=scrabble/twente&bot=1 opens a 2-seat table
// under the name in the form (a guest name if empty) and adds a bot (issue 24).
const PARAMS = new URLSearchParams(location.search);
const INVITED = PARAMS.get("table");
let quick = PARAMS.get("bot") && PARAMS.get("game") ? PARAMS.get("game") : null;
// Its options (issue 34, the lobby's "Against a bot" choices): the bot's level, the
// table's clock (one the game takes, else none), Santorini's gods.
const QUICK = { level: PARAMS.get("level"), clock: PARAMS.get("clock") ?? "", gods: PARAMS.get("gods") === "1" };
// The lobby's "Play a person" grid (issue 34): /play?game=scrabble/twente&clock=25+0&seek=1
// sits at an open 2-seat table of that game and clock where someone waits, else opens
// one and waits there for the next person who asks the same.
// ``botafter`` (seconds, the lobby's "if nobody comes" choice): after that wait alone at
// the table, the page offers a bot (issue 34: "or offers a bot after a wait you choose").
let seek = PARAMS.get("seek") && PARAMS.get("game") && !quick
  ? { game: PARAMS.get("game"), clock: PARAMS.get("clock") ?? "",
      botAfter: Math.min(3600, Math.max(0, Number(PARAMS.get("botafter")) || 0)) } : null;
// The server's Scrabble lexicon (the page says it on every Scrabble table and game).
const LEXICON = document.getElementById("play").dataset.lexicon;
// A cluster edge seats no server bot (docs/cluster.md): no "Add a bot", no quick game.
const BOTS = document.getElementById("play").dataset.bots !== "no";
if (!BOTS) quick = null;
// Each game's part of the page is loaded when a game of it is about to be played (its
// table is joined, or its first view comes): the page carries one game's code, not three
// (issue 24, page weight; docs/web.md).
const LOADERS = {
  scrabble: () => import("./play/scrabble.js"),
  santorini: () => import("./play/santorini.js"),
  spectrangle: () => import("./play/spectrangle.js"),
};
const GAMES = {};
const loading = {};
function loadGame(name) {
  if (!LOADERS[name]) return Promise.reject(new Error(`no game ${name}`));
  loading[name] ??= LOADERS[name]().then((module) => { GAMES[name] = module; return module; });
  return loading[name];
}
// A seat view is shown once its game's code is there; while it loads, a newer view
// replaces the one waiting (each view is whole).
let waitingSeat = null;
function showSeat(msg) {
  // A view of the game this page just left (its abort's end, on its way as the page
  // stood up): the page is back at the tables and stays there.
  if (page.leftGame && msg.uid === page.leftGame) return;
  const name = msg.data?.game;
  if (GAMES[name]) { seatView(msg.data, msg.uid); return; }
  waitingSeat = msg;
  loadGame(name).then(() => {
    const next = waitingSeat;
    waitingSeat = null;
    if (next) showSeat(next);
  }, () => status(`This page cannot show ${name} games.`));
}

// --- connection ------------------------------------------------------------------------

function connect() {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const socket = new WebSocket(`${scheme}//${location.host}/ws`);
  page.socket = socket;
  socket.addEventListener("open", () => socket.send(JSON.stringify({ type: "hello", protocol: PROTOCOL })));
  socket.addEventListener("message", (event) => {
    let msg;
    try { msg = JSON.parse(event.data); } catch { return; }
    if (msg.type === "welcome") {
      send({ type: "subscribe", topic: "lobby" });
      if (page.token) { page.rejoining = true; send({ type: "rejoin", token: page.token }); }
      else if (quick) quickPlay();
      else if (seek) seek.pending = true; // decided on the lobby's first snapshot
    } else if (msg.type === "lobby") {
      page.rooms = msg.data.rooms ?? [];
      tables(msg.data.tables);
      seekTable(msg.data.tables);
    }
    else if (msg.type === "seated") seated(msg);
    else if (msg.type === "unseated") elsewhere();
    else if (msg.type === "seat") showSeat(msg);
    else if (msg.type === "chat") chatLine(msg);
    else if (msg.type === "preview" && page.view) GAMES[page.view.game]?.preview?.(msg);
    else if (msg.type === "error") {
      if (msg.code === "name-taken" && askAgain(msg)) return;
      // Refused while not seated but holding a token: the rejoin was refused (the game is
      // over, the grace period passed): the token is stale.
      if (msg.code === "refused" && !page.seated && page.token) {
        forget(); shown("elsewhere", false);
        // The stale token was the page's first try: "Play X now" goes on without it.
        if (page.rejoining && quick) { page.rejoining = false; quickPlay(); return; }
      }
      page.rejoining = false;
      if (msg.code === "illegal" && page.view) GAMES[page.view.game]?.refused?.();
      // The game ended while a request of the page's was on its way (a score preview as
      // the last move was made): its "not now" is stale, and "The game is over." stays.
      if (msg.code === "not-now" && page.view?.over) return;
      status(msg.message);
    }
  });
  // A dropped socket comes back and presents the page's token: the seat is held meanwhile.
  // (Not a socket this page closed on leaving, nor one a newer socket replaced.)
  socket.addEventListener("close", () => {
    if (page.socket !== socket) return;
    page.seated = false;
    setTimeout(connect, 1000);
  });
}
// Leaving the page for another in this tab, which the browser may keep frozen to come
// back to (the back/forward cache): the socket closes as a closed tab's would, so the
// server lets this page's name go, and a seat mid-game is held for its rejoin, by the
// usual rules, not kept for a frozen page (whose name a "Play X now" in the next page
// would find taken). Coming back connects again and takes the seat back by its token.
window.addEventListener("pagehide", () => {
  const socket = page.socket;
  page.socket = null;
  socket?.close();
});
window.addEventListener("pageshow", (event) => { if (event.persisted && !page.socket) connect(); });

function shown(id, on) {
  document.getElementById(id).hidden = !on;
  if (id === "play") { document.body.classList.toggle("seated", on); fitSoon(); }
}

// Asking for a seat (create, sit). A name another connection holds may be this browser's
// own page that is closing (a reload, "Play X now" from a finished game): the server lets
// the name go when that socket closes, so an ask under the name this browser last sat as
// is made again a few times before the refusal stands.
const NAME_TRIES = 5;
function ask(msg) { page.ask = { msg, tries: 0 }; send(msg); }
function askAgain(msg) {
  const asked = page.ask;
  if (!asked || asked.msg.name !== localStorage.getItem(NAME) || asked.tries >= NAME_TRIES) return false;
  asked.tries += 1;
  status(`${msg.message}: asking again…`);
  setTimeout(() => { if (page.ask === asked) send(asked.msg); }, 800);
  return true;
}

// Seated: the game takes the page (the form and the open tables come back after it).
function seated(msg) {
  page.ask = null;
  page.seated = true;
  page.name = msg.name;
  page.table = msg.table;
  page.token = msg.token;
  localStorage.setItem(TOKEN, msg.token);
  shown("elsewhere", false);
  shown("join", false); shown("play", true); shown("over", false); shown("leave", true);
  document.getElementById("who").textContent = `You are ${msg.name}`;
  document.getElementById("table").textContent = msg.table;
  localStorage.setItem(NAME, msg.name);
  if (page.rejoining && quick) {
    // "Play X now" while this browser holds an unfinished game: the game comes back and
    // the page says why, rather than silently showing another game than the one asked.
    const asked = quick.split("/")[0];
    quick = null;
    history.replaceState(null, "", "/play");
    const notice = document.getElementById("notice");
    notice.textContent = `You are back in a game of yours that is not over: finish it, `
      + `or resign it, before you play ${asked} now.`;
    notice.hidden = false;
  }
  page.rejoining = false;
  if (page.addBot === "next") { page.addBot = null; addBot(msg.table); }
  // A seek's table: the lobby may have shown an older one like it before this seat came.
  if (seek?.waiting) queueMicrotask(() => seekTable(page.tables ?? []));
  if (seek?.waiting && seek.botAfter && !seek.timer) {
    seek.timer = setTimeout(offerBot, seek.botAfter * 1000);
  }
  for (; page.rematchBots > 0; page.rematchBots--) addBot(msg.table);
  if (!page.view || page.view.over) {
    page.view = null;
    shown("before", true); shown("chat", false); // chat opens when the game starts
    status(seek?.waiting ? "Waiting for an opponent: the next person who asks for this game and clock sits here."
      : "Waiting for the table to fill.");
    waiting();
  }
}

// Back to the form and the open tables.
function unseated() {
  turnAlert(false);
  showClocks("clocks", null);
  page.seated = false; page.view = null; page.table = "";
  forget();
  shown("join", true); shown("play", false); shown("over", false); shown("notice", false);
  status("");
}

// The seat is given up (left, the game over, the token refused): this page forgets its
// token, and so does the browser unless another tab has stored a newer seat's since.
function forget() {
  if (page.token && localStorage.getItem(TOKEN) === page.token) localStorage.removeItem(TOKEN);
  page.token = null;
}

// Another tab or window (any connection with the token) took this seat: the server said
// "unseated". This page steps aside and keeps no token, so its own reconnects do not take
// the seat back (two tabs would take it from each other for ever); the stored token is the
// other tab's now, so it stays. "Play here" takes the seat back on purpose.
let lost = null;
function elsewhere() {
  lost = page.token;
  page.seated = false; page.view = null; page.table = ""; page.token = null;
  shown("join", true); shown("play", false); shown("over", false); shown("elsewhere", true);
  status("");
}
document.getElementById("here").addEventListener("click", () => {
  page.token = lost;
  if (page.token) send({ type: "rejoin", token: page.token });
});

// --- the lobby ---------------------------------------------------------------------------

const NAME = "meeple.name";
// A guest name until one is typed (the form is never stuck on an empty name); the name
// last seated under in this browser if there is one.
function guestName() { return `guest${Math.floor(1000 + Math.random() * 9000)}`; }
{
  const input = document.querySelector("#create [name=name]");
  if (!input.value) input.value = localStorage.getItem(NAME) ?? guestName();
}

// The bot level chosen in the form (levels are the server's: docs/server.md, Bots).
// Seated, the menu beside "Add a bot"; in the list of open tables, the one above it.
function botLevel(id = "bot-level") { return document.getElementById(id).value; }
function addBot(table, id = "bot-level") { send({ type: "bot", table, level: botLevel(id) }); }

// "Play X now": a 2-seat table of that game and a bot at it, once per visit.
function quickPlay() {
  const game = quick;
  quick = null;
  history.replaceState(null, "", "/play");
  const input = document.querySelector("#create [name=name]");
  if (!input.value) input.value = guestName();
  const select = document.querySelector("#create [name=game]");
  const wanted = QUICK.gods && game.startsWith("santorini/") ? "santorini/gods" : game;
  if ([...select.options].some((o) => o.value === wanted)) select.value = wanted;
  const [g, variant] = select.value.split("/");
  const level = document.getElementById("bot-level");
  if (QUICK.level && [...level.options].some((o) => o.value === QUICK.level)) level.value = QUICK.level;
  const clockOption = [...document.querySelector("#create [name=clock]").options]
    .find((o) => o.value === QUICK.clock && (!o.dataset.games || o.dataset.games.split(" ").includes(g)));
  const clock = clockOption?.value ?? "";
  page.addBot = "next";
  clearChat();
  ask({ type: "create", game: g, variant, size: 2, name: input.value, start: "full",
    ...(clock ? { clock } : {}) });
}

// "Play a person": a seek's table is an open 2-seat table of its game, variant and clock,
// with the server's words, starting when full, where people (not bots) wait.
function seekable(t, s) {
  const [game, variant] = s.game.split("/");
  return t.game === game && t.variant === variant && t.players === 2 && t.start === "full"
    && (t.settings?.clock ?? "") === s.clock && !t.settings?.lexicon
    && t.waiting.length < t.players && t.waiting.every((w) => w.protocol !== "bot");
}
const tableNumber = (id) => Number(String(id).replace(/\D+/g, "")) || 0;
function seekTable(list) {
  if (!seek || page.view) return;
  if (seek.pending) {
    // First snapshot: sit where someone waits, else open the table and wait there.
    seek.pending = false;
    history.replaceState(null, "", "/play");
    const open = list.filter((t) => seekable(t, seek) && t.waiting.length > 0)
      .sort((a, b) => tableNumber(a.id) - tableNumber(b.id));
    const input = document.querySelector("#create [name=name]");
    if (!input.value) input.value = guestName();
    clearChat();
    if (open.length) { ask({ type: "sit", table: open[0].id, name: input.value }); seek = null; return; }
    const [game, variant] = seek.game.split("/");
    ask({ type: "create", game, variant, size: 2, name: input.value, start: "full",
      ...(seek.clock ? { clock: seek.clock } : {}) });
    seek.waiting = true;
    return;
  }
  if (!seek.waiting || !page.seated || !page.table) return;
  // Alone at our table while another person waits at an older table just like it (we
  // both asked at once): the newer table's person moves to the older one, so two seeks
  // meet rather than wait side by side. Both pages apply the same rule.
  const mine = list.find((t) => t.id === page.table);
  const older = list.filter((t) => t.id !== page.table && seekable(t, seek) && t.waiting.length === 1
    && tableNumber(t.id) < tableNumber(page.table));
  // (Our table may not be in the list yet: the lobby's update of it is on its way.)
  if ((!mine || mine.waiting.length === 1) && older.length) {
    const name = page.name;
    send({ type: "leave" });
    unseated();
    ask({ type: "sit", table: older[0].id, name });
    seek = null;
  }
}

// Nobody came within the seek's wait: say so, and offer the table's "Add a bot".
function offerBot() {
  if (!seek?.waiting || !page.seated || page.view) return;
  status("Nobody has come yet: add a bot to play now, or keep waiting.");
  const button = document.getElementById("bot");
  button?.classList.add("offered");
  button?.focus();
}

// A table's clock in words: "25 min", "5 min + 3 s" (docs/web.md, "Clocks").
function clockLabel(spec) {
  if (!spec) return null;
  const [minutes, increment] = spec.split("+");
  return Number(increment) ? `${minutes} min + ${increment} s` : `${minutes} min`;
}
function clockNote(table) {
  const label = clockLabel(table.settings?.clock);
  return label ? el("small", { class: "clock-note" }, ` · clock: ${label}`) : null;
}

// The form offers the clocks of the game chosen (Scrabble: minutes and overtime; the
// others: Fischer increments).
function clockChoices() {
  const game = document.querySelector("#create [name=game]").value.split("/")[0];
  const select = document.querySelector("#create [name=clock]");
  for (const option of select.options) {
    const fits = !option.dataset.games || option.dataset.games.split(" ").includes(game);
    option.hidden = !fits;
    option.disabled = !fits;
  }
  if (select.selectedOptions[0]?.disabled) select.value = "";
  // A word list is a Scrabble table's only.
  document.querySelector("#create .lexicon-choice").hidden = game !== "scrabble";
}
document.querySelector("#create [name=game]").addEventListener("change", clockChoices);
clockChoices();

// A Scrabble table's word list: its own (docs/web.md, "Word lists"), else the server's.
function lexiconNote(table) {
  return table.game === "scrabble"
    ? el("small", { class: "lexicon" }, ` words: ${lexiconLabel(table.settings?.lexicon ?? LEXICON)}`) : null;
}

function tables(list) {
  // The invited table first (the lobby's "sit here" link), then the others.
  const sorted = [...list].sort((a, b) => (b.id === INVITED) - (a.id === INVITED));
  const rows = sorted.map((t) => el("tr", { "data-table": t.id, class: t.id === INVITED ? "invited" : null },
    el("td", { "data-label": "Table" }, t.id, t.id === INVITED ? el("b", { class: "invite-mark" }, " (your invitation)") : null),
    el("td", { "data-label": "Game" }, `${t.game} (${t.variant})`, lexiconNote(t), clockNote(t)),
    el("td", { "data-label": "Seats" }, `${t.waiting.length}/${t.players}${t.start === "ready" ? " max, when ready" : ""}`),
    el("td", { "data-label": "Waiting" }, t.waiting.map((w) => `${w.name} (${w.protocol})`).join(", ")),
    el("td", {},
      el("button", { type: "button", class: "sit", onclick: () => sit(t.id) }, "Sit"), " ",
      BOTS ? el("button", { type: "button", class: "addbot", onclick: () => addBot(t.id) }, "Add a bot") : null)));
  page.tables = list;
  rematchOffers(list);
  waiting();
  if (INVITED && !page.seated) {
    const open = list.some((t) => t.id === INVITED);
    status(open ? `Pick a name and press Sit to join ${INVITED}.` : `${INVITED} is no longer open.`);
  }
  const target = document.getElementById("tables");
  target.replaceChildren(rows.length ? el("table", { class: "stack" }, el("tbody", {}, rows))
    : el("p", { class: "empty" }, INVITED ? `${INVITED} is no longer open.` : "No table is open."));
}

// Who sits at this table so far, and the Ready button where the table starts on it
// (the lobby's snapshot and the seating can come in either order).
function waiting() {
  const mine = (page.tables ?? []).find((t) => t.id === page.table);
  if (!mine || page.view) return;
  page.botsAtTable = mine.waiting.filter((w) => w.protocol === "bot").length;
  page.tableVariant = mine.variant;
  page.tableClock = mine.settings?.clock ?? "";
  loadGame(mine.game).catch(() => {}); // ready before the game starts
  document.getElementById("waiting").replaceChildren(`· ${mine.game} (${mine.variant}) · `
    + `${mine.waiting.length} of ${mine.players}: ${mine.waiting.map((w) => `${w.name} (${w.protocol})`).join(", ")}`,
    lexiconNote(mine) ?? "", clockNote(mine) ?? "");
  shown("ready", mine.start === "ready");
}

function nameInput() {
  const input = document.querySelector("#create [name=name]");
  if (!input.reportValidity()) return null;
  return input.value;
}

function sit(table) {
  const name = nameInput();
  if (name) { clearChat(); ask({ type: "sit", table, name }); }
}

document.getElementById("create").addEventListener("submit", (event) => {
  event.preventDefault();
  const form = new FormData(event.target);
  const name = nameInput();
  if (!name) return;
  const [game, variant] = String(form.get("game")).split("/");
  clearChat();
  const clock = String(form.get("clock") ?? "");
  const lexicon = game === "scrabble" ? String(form.get("lexicon") ?? "") : "";
  ask({ type: "create", game, variant, size: Number(form.get("size")), name,
    start: form.get("ready") ? "ready" : "full", ...(clock ? { clock } : {}),
    ...(lexicon && lexicon !== LEXICON ? { lexicon } : {}) });
});
document.getElementById("ready").addEventListener("click", () => send({ type: "ready" }));
// Leave before the game: the seat is simply given up. Leave or Resign mid-game: the game
// is resigned, after a confirmation in the page (issue 24): Santorini's give-up (LOSE;
// with three players the others play on), in Scrabble and Spectrangle the seat leaves,
// which ends the game by the table's leave rule.
function leaveNow() { page.leftGame = page.uid ?? null; send({ type: "leave" }); unseated(); }
function resign() {
  shown("confirm-resign", false);
  const leaving = page.leaving;
  page.leaving = false;
  if (page.view?.game === "santorini" && page.view.legal?.lose) {
    send({ type: "play", action: { kind: "lose" } });
    return;
  }
  // The seat leaves (the game ends by the table's leave rule): no view comes after it, so
  // the page shows the end itself, with Rematch.
  if (leaving) { leaveNow(); return; } // Leave: back to the tables at once
  const view = page.view;
  send({ type: "leave" });
  forget();
  page.seated = false;
  page.view = { ...view, over: true };
  remember(page.view);
  turnAlert(false);
  status("You resigned.");
  document.getElementById("result").textContent = "You resigned: the game is over.";
  shown("over", true); shown("leave", false); shown("resign", false); shown("abort", false); shown("chat", false);
  shown("notice", false);
  draw();
}
function abortGame() {
  shown("confirm-resign", false);
  send({ type: "abort" }); // the game's end comes back as a view ("Game aborted")
}
function askResign() {
  if (!page.view || page.view.over) { leaveNow(); return; }
  if (page.view.may_abort) {
    // Before the player's first move nothing is resigned (issue 34.4): Abort ends the
    // game unrated; Leave aborts it and stands up at once.
    abortGame();
    if (page.leaving) { page.leaving = false; leaveNow(); }
    return;
  }
  shown("confirm-resign", true);
  document.getElementById("resign-yes").focus();
}
document.getElementById("leave").addEventListener("click", () => { page.leaving = true; askResign(); });
document.getElementById("resign").addEventListener("click", () => { page.leaving = false; askResign(); });
document.getElementById("abort").addEventListener("click", abortGame);
document.getElementById("resign-yes").addEventListener("click", resign);
document.getElementById("resign-no").addEventListener("click", () => shown("confirm-resign", false));
document.getElementById("again").addEventListener("click", unseated);
document.getElementById("bot")?.addEventListener("click", () => addBot(page.table, "bot-level-seated"));

// --- rematch -----------------------------------------------------------------------------
// At the end, Rematch opens a table of the same game for the same number, and seats a
// bot again for each bot that played. The other players see it offered on their page
// (a table of that game where a player of the last game waits), with Accept to sit.
let lastGame = null;
function remember(view) {
  lastGame = {
    game: view.game, variant: page.tableVariant ?? view.variant ?? "standard", size: view.players.length,
    players: view.players, me: view.players[view.you], bots: page.botsInGame ?? page.botsAtTable ?? 0,
    clock: view.clocks?.control.spec ?? "",
    lexicon: view.game === "scrabble" && view.lexicon !== LEXICON ? view.lexicon : "",
  };
}

function rematch() {
  if (!lastGame) return;
  const { game, variant, size, bots, clock, lexicon } = lastGame;
  page.rematchBots = bots;
  page.view = null;
  clearChat();
  ask({ type: "create", game, variant, size, name: page.name || nameInput(), start: "full",
    ...(clock ? { clock } : {}), ...(lexicon ? { lexicon } : {}) });
}
document.getElementById("rematch").addEventListener("click", rematch);

function rematchOffers(list) {
  const box = document.getElementById("rematch-offer");
  const playing = page.view ? !page.view.over : page.seated;
  if (!lastGame || playing) { box.hidden = true; return; }
  const offer = list.find((t) => t.game === lastGame.game && t.variant === lastGame.variant
    && t.waiting.some((w) => lastGame.players.includes(w.name) && w.name !== lastGame.me));
  box.hidden = !offer;
  if (!offer) return;
  const who = offer.waiting.find((w) => lastGame.players.includes(w.name)).name;
  box.replaceChildren(`${who} offers a rematch. `,
    el("button", { type: "button", class: "accept-rematch", onclick: () => { box.hidden = true; sit(offer.id); } }, "Accept"));
}

// --- the game --------------------------------------------------------------------------

function seatView(view, uid) {
  const before = page.view;
  page.view = view;
  page.uid = uid;
  if (past.steps && !view.over && before?.moves.length !== view.moves.length) loadHistory(true);
  if (view.over) closeHistory(false);
  shown("join", false); shown("play", true); shown("before", false); shown("chat", !view.over);
  // Issue 34.4: Abort until this player's first move (the server says when), then Resign.
  shown("abort", !view.over && !!view.may_abort);
  shown("resign", !view.over && !view.may_abort);
  document.getElementById("waiting").replaceChildren(`· ${view.game}${view.variant ? ` (${view.variant})` : ""}`,
    view.game === "scrabble" ? el("span", { class: "lexicon" }, " · words: ", el("b", {}, lexiconLabel(view.lexicon ?? LEXICON))) : "");
  turnAlert(!view.over && view.turn === view.you);
  // How many server bots play this game (the lobby's rooms say each seat's protocol):
  // a rematch seats as many again.
  const room = (page.rooms ?? []).find((r) => r.uid === uid);
  if (room) page.botsInGame = room.protocols.filter((p) => p === "bot").length;
  // What is being typed or clicked lasts as long as the game's part says (newView).
  GAMES[view.game].newView(before, view);
  showClocks("clocks", view.clocks ?? null, view.players);
  if (view.over) {
    remember(view);
    forget();
    page.seated = false; // the server unseats every seat of a finished game
    status("The game is over.");
    document.getElementById("result").textContent = resultText(view);
    document.getElementById("replay").href = `/games/${uid}`;
    shown("over", true); shown("leave", false); shown("chat", false); // chat ends with the game
    shown("notice", false);
  } else if (view.turn === view.you) {
    status("Your turn.");
  } else {
    status(`${view.players[view.turn] ?? ""} to play.`);
  }
  draw();
}

// "ann wins 380 to 340", "a draw at 300", "pia wins": from the view's result.
function resultText(view) {
  const r = view.result;
  if (!r) return "The game was abandoned.";
  // Issue 34.4 and 34.9: an abort and a resignation say who.
  const by = Number.isInteger(r.player) ? (r.player === view.you ? "you" : view.players[r.player]) : null;
  if (r.reason === "aborted") return `Game aborted${by ? ` by ${by}` : ""}: it is not rated.`;
  const names = (r.winners ?? []).map((w) => (w === view.you ? "You" : view.players[w]));
  const scores = r.scores ? ` (${r.scores.map((s, i) => `${view.players[i]} ${s}`).join(", ")})` : "";
  const resigned = r.reason === "resigned" && by ? `${by === "you" ? "You" : by} resigned. ` : "";
  if (!names.length) return `${resigned}No winner${scores}.`;
  if (names.length > 1) return `${resigned}A draw between ${names.join(" and ")}${scores}.`;
  const how = r.how ? `: ${r.how}` : ""; // Santorini: how (issue 34)
  return `${resigned}${names[0]} ${names[0] === "You" ? "win" : "wins"}${scores}${how}.`;
}

function draw() {
  const view = page.view;
  if (!view) return;
  shown("history", !view.over);
  if (past.steps) { drawHistory(); return; }
  shown("history-bar", false);
  replaceChildren("board", renderBoard(view));
  replaceChildren("panel", renderPanel(view));
  const moves = renderMoves(view);
  replaceChildren("moves", moves);
  if (view.over) {
    // Nothing left to play: no rack, hand or buttons (the result says how it ended).
    for (const id of ["mine", "controls"]) document.getElementById(id).replaceChildren();
  } else {
    GAMES[view.game].drawGame(view);
  }
  fit(); // the rack and buttons drawn: what is left for the board and the moves
  moves.scrollTop = moves.scrollHeight;
}
onRedraw(draw);

// --- the game so far, step by step (issue 24) ------------------------------------------
// "Step through" fetches the running game's steps with their spectator views (the
// server replays its record: /games/<uid>/history.json) and shows them like a replay:
// ← → Home End step, Esc or "Back to the game" returns. New moves meanwhile extend
// the list; the page stays on the step shown unless it was on the last one.
// ``opened`` counts the times it was opened or closed: an answer that comes back after
// the player closed it (a new move's refresh still on its way) is dropped.
const past = { steps: null, at: 0, opened: 0 };

async function loadHistory(follow) {
  if (!page.uid) return;
  if (!follow) past.opened++;
  const asked = past.opened;
  const answer = await fetch(`/games/${encodeURIComponent(page.uid)}/history.json`);
  if (asked !== past.opened) return;
  if (!answer.ok) { closeHistory(); return; }
  const steps = (await answer.json()).steps;
  if (asked !== past.opened) return;
  const wasLast = !past.steps || past.at >= past.steps.length - 1;
  past.steps = steps;
  if (!follow || wasLast) past.at = steps.length - 1;
  draw();
}

function closeHistory(redraw = true) {
  past.opened++;
  if (!past.steps) return;
  past.steps = null;
  if (redraw) draw();
}

function goHistory(to) {
  if (!past.steps) return;
  const last = past.steps.length - 1;
  past.at = Math.max(0, Math.min(last, { first: 0, prev: past.at - 1, next: past.at + 1, last }[to] ?? to));
  draw();
}

function drawHistory() {
  const step = past.steps[past.at];
  replaceChildren("board", renderBoard(step.view));
  replaceChildren("panel", renderPanel(step.view));
  const list = el("ol", { class: "moves steps", start: 0 }, past.steps.map((s, i) =>
    el("li", { class: i === past.at ? "current" : null },
      el("button", { type: "button", class: "link", onclick: () => goHistory(i) }, s.text))));
  replaceChildren("moves", list);
  list.querySelector(".current")?.scrollIntoView({ block: "nearest" });
  document.getElementById("history-where").textContent = `step ${past.at} of ${past.steps.length - 1}`;
  shown("history-bar", true);
  // The game goes on: what to play waits until the player comes back to it.
  document.getElementById("mine").replaceChildren(el("p", { class: "note" },
    page.view.turn === page.view.you ? "Your turn — " : "", "looking at the game so far."));
  document.getElementById("controls").replaceChildren();
}

document.getElementById("history").addEventListener("click", () => (past.steps ? closeHistory() : loadHistory(false)));
document.getElementById("history-close").addEventListener("click", () => closeHistory());
for (const b of document.querySelectorAll("#history-bar [data-go]")) {
  b.addEventListener("click", () => goHistory(b.dataset.go));
}

// --- chat ------------------------------------------------------------------------------
// Lines said in this seat's game, on any protocol that has chat (its own come back too).
// The server keeps no history: a reload starts an empty log.

// A new table starts an empty log (a rejoin keeps what the page shows).
function clearChat() { document.getElementById("chat-log").replaceChildren(); }

function chatLine(msg) {
  const log = document.getElementById("chat-log");
  const mine = msg.from === page.name;
  log.append(el("p", { class: mine ? "line mine" : "line" },
    el("span", { class: "from" }, msg.from), " ", el("span", { class: "text" }, msg.text)));
  while (log.childElementCount > 200) log.firstElementChild.remove();
  log.scrollTop = log.scrollHeight;
}

document.getElementById("chat").addEventListener("submit", (event) => {
  event.preventDefault();
  const input = event.target.elements.text;
  const text = input.value;
  if (!text.trim()) return;
  send({ type: "chat", text });
  input.value = "";
});

document.addEventListener("keydown", (event) => {
  if (past.steps && !event.target.closest?.("input, textarea, select")) {
    const to = { ArrowLeft: "prev", ArrowRight: "next", Home: "first", End: "last" }[event.key];
    if (to) { goHistory(to); event.preventDefault(); return; }
    if (event.key === "Escape") { closeHistory(); event.preventDefault(); return; }
  }
  if (page.view && !past.steps) GAMES[page.view.game]?.keydown?.(event);
});

connect();
