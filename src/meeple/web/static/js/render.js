import { reasonText } from "./wording.js";

// Builds the same markup as templates/boards.html from a spectator view, so a live
// update or a replay step looks exactly like the server-rendered page.
const PREMIUM = { ".": "", l: "dl", L: "tl", w: "dw", W: "tw" };
const PREMIUM_LABEL = { ".": "", l: "DL", L: "TL", w: "DW", W: "TW" };
const PREMIUM_WORDS = { ".": "", l: "double letter", L: "triple letter", w: "double word", W: "triple word" };
const LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v; else node.setAttribute(k, v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

function scrabbleBoard(view) {
  const pending = new Set((view.pending?.squares ?? []).map(([x, y]) => `${x},${y}`));
  const board = el("div", { class: "sboard", style: `--n: ${view.size}`, role: "grid", "aria-label": "Scrabble board" });
  for (let y = 0; y < view.size; y++) {
    // An ARIA grid has rows of cells; the rows take no room (display: contents).
    const row = el("div", { class: "brow", role: "row" });
    board.append(row);
    for (let x = 0; x < view.size; x++) {
      const code = view.premiums[y][x];
      const t = view.board[y][x];
      const cls = ["sq", PREMIUM[code], pending.has(`${x},${y}`) ? "pending" : ""].filter(Boolean).join(" ");
      // The name holds the text the square shows ("DW"), as WCAG's label-in-name asks.
      const what = t !== "." ? `${t.toUpperCase()}${t !== t.toUpperCase() ? " (blank)" : ""}`
        : code !== "." ? `${PREMIUM_LABEL[code]} (${PREMIUM_WORDS[code]})` : "empty";
      const sq = el("div", { class: cls, "data-x": x, "data-y": y, role: "gridcell", "aria-label": `${LETTERS[x]}${y + 1}: ${what}` });
      if (t !== ".") {
        const blank = t !== t.toUpperCase();
        sq.append(el("span", { class: blank ? "tile blank" : "tile" }, t.toUpperCase()));
      } else if (x === 7 && y === 7 && view.size === 15) {
        sq.append(el("span", { class: "star" }, "★"));
      } else if (code !== ".") {
        sq.append(el("span", { class: "prem" }, PREMIUM_LABEL[code]));
      }
      row.append(sq);
    }
  }
  return board;
}

function santoriniBoard(view) {
  const board = el("div", { class: "tboard", role: "grid", "aria-label": "Santorini board" });
  let row = null;
  for (let c = 0; c < 25; c++) {
    const level = view.levels[c];
    if (c % 5 === 0) { row = el("div", { class: "brow", role: "row" }); board.append(row); }
    const here = view.workers.filter((w) => w.cell === c);
    const label = `${"abcde"[c % 5]}${Math.floor(c / 5) + 1}: level ${level}${view.domes[c] ? ", dome" : ""}`
      + here.map((w) => `, ${view.players[w.owner]}'s worker ${w.sex}`).join("");
    const cell = el("div", {
      class: `cell lv-${level}${view.domes[c] ? " dome" : ""}`, "data-cell": c, "data-level": level,
      role: "gridcell", "aria-label": label,
    }, el("span", { class: "coord" }, `${"abcde"[c % 5]}${Math.floor(c / 5) + 1}`));
    // Stacked tiers seen from above, the top one smallest (templates/boards.html too).
    for (let t = 1; t <= level; t++) cell.append(el("span", { class: `tier t${t}` }));
    if (level) cell.append(el("span", { class: "lvl" }, level));
    if (view.domes[c]) cell.append(el("span", { class: "cap", title: "dome" }));
    for (const w of here) {
      cell.append(el("span", { class: `worker p${w.owner}`, title: view.players[w.owner] }, w.sex));
    }
    row.append(cell);
  }
  return board;
}

const W = 60, H = 52, ROWS = 6;
const fmt = (n) => String(Math.round(n * 1e4) / 1e4);
const pts = (...ps) => ps.map(([x, y]) => `${fmt(x)},${fmt(y)}`).join(" ");

// Same numbers as web/boards.py: the field's outline, its three sides and its centre.
export function spectrangleGeometry(index) {
  let row = 0;
  while ((row + 1) * (row + 1) <= index) row++;
  const k = index - row * row;
  const x0 = (ROWS - 1 - row) * W / 2, top = row * H, bottom = (row + 1) * H;
  let p0, p1, p2, c, sides;
  if (k % 2 === 0) {
    const left = x0 + (k / 2) * W;
    p0 = [left, bottom]; p1 = [left + W, bottom]; p2 = [left + W / 2, top];
    c = [left + W / 2, top + H * 2 / 3];
    sides = [[p0, p1], [p0, p2], [p2, p1]];
  } else {
    const left = x0 + Math.floor(k / 2) * W + W / 2;
    p0 = [left, top]; p1 = [left + W, top]; p2 = [left + W / 2, bottom];
    c = [left + W / 2, top + H / 3];
    sides = [[p0, p1], [p1, p2], [p2, p0]];
  }
  return { points: pts(p0, p1, p2), sides: sides.map(([a, b]) => pts(a, b, c)), cx: fmt(c[0]), cy: fmt(c[1] + 5) };
}

function spectrangleBoard(view) {
  const root = svg("svg", { class: "rboard", viewBox: "-4 -4 368 320", role: "img", "aria-label": "Spectrangle board" });
  for (const f of view.fields) {
    const g = spectrangleGeometry(f.index);
    const group = svg("g", { class: f.bonus > 1 ? "field bonus" : "field", "data-field": f.index, "data-tile": f.tile ?? "" });
    group.append(svg("polygon", { class: "bg", points: g.points }));
    if (f.tile) {
      for (let s = 0; s < 3; s++) group.append(svg("polygon", { class: `c-${f.tile[s]}`, points: g.sides[s] }));
      group.append(svg("text", { x: g.cx, y: g.cy, class: "val" }, f.tile[3]));
    } else if (f.bonus > 1) {
      group.append(svg("text", { x: g.cx, y: g.cy, class: "mult" }, `×${f.bonus}`));
    } else {
      group.append(svg("text", { x: g.cx, y: g.cy, class: "idx" }, f.index));
    }
    root.append(group);
  }
  return root;
}

export function renderBoard(view) {
  if (view.game === "scrabble") return scrabbleBoard(view);
  if (view.game === "santorini") return santoriniBoard(view);
  return spectrangleBoard(view);
}

export function renderPanel(view) {
  const head = el("tr", {}, el("th"), el("th", {}, "Player"),
    view.scores !== null ? el("th", { class: "num" }, "Score") : null,
    view.game === "scrabble" ? el("th", { class: "num" }, "Rack")
      : view.game === "santorini" ? el("th", {}, "God") : el("th", {}, "Hand"));
  const body = el("tbody");
  view.players.forEach((name, i) => {
    const turn = view.turn === i;
    let extra;
    if (view.game === "scrabble") extra = el("td", { class: "num" }, `${view.rack_sizes[i]} ${view.rack_sizes[i] === 1 ? "tile" : "tiles"}`);
    else if (view.game === "santorini") {
      // The god's power in words beside it (no hover needed: issue 24).
      const god = view.gods[i];
      extra = el("td", { class: "god" }, god || (view.gods_in_play ? "—" : "no gods"),
        god && view.powers?.[god] ? el("p", { class: "power" }, view.powers[god]) : null);
    }
    else extra = el("td", { class: "hand" }, view.hands[i].map((t) => el("span", { class: "mini" }, t)));
    body.append(el("tr", { class: `p${i}${turn ? " turn" : ""}`, "data-player": i },
      el("td", { class: "mark" }, turn ? "▶" : ""),
      el("td", { class: "name" }, view.game === "santorini" ? el("span", { class: `panel-worker p${i}`, "aria-hidden": "true" }) : null, name),
      view.scores !== null ? el("td", { class: "num score" }, view.scores[i]) : null, extra));
  });
  const facts = el("p", { class: "facts" });
  if (view.game === "scrabble") {
    facts.append(el("span", { class: "bag" }, `${view.bag} tiles in the bag`));
    if (view.pending) {
      facts.append(" · ", el("span", { class: "challenge" },
        `challenge window open (${view.players[view.pending.player]}, ${view.pending.score})`));
    }
  } else if (view.game === "santorini") {
    facts.append(el("span", { class: "phase" }, `phase: ${view.phase}`));
    if (view.pool.length) facts.append(` · pool: ${view.pool.join(", ")}`);
  } else {
    facts.append(el("span", { class: "bag" }, `${view.bag} tiles in the bag`));
  }
  const section = el("section", { class: "players" }, el("table", {}, el("thead", {}, head), body), facts);
  if (view.result) {
    const r = view.result;
    const winners = r.winners.map((w) => view.players[w]).join(", ");
    // Santorini says how it was won (issue 34); a resignation or an abort says who.
    const by = Number.isInteger(r.player) ? view.players[r.player] : null;
    const how = r.how ? `: ${r.how}` : r.reason === "resigned" && by ? `: ${by} resigned` : "";
    const over = r.reason === "aborted" ? `Game aborted${by ? ` by ${by}` : ""}.`
      : `Game over (${reasonText(r.reason)}${how}).`;
    section.append(el("p", { class: "result" }, over, winners ? ` Winner: ${winners}.` : ""));
  }
  return section;
}

export function renderMoves(view) {
  const list = el("ol", { class: "moves" });
  for (const m of view.moves) {
    list.append(el("li", m.pending ? { class: "pending", title: "in its challenge window" } : {},
      m.player !== null && m.player !== undefined ? [el("b", {}, view.players[m.player]), " "] : null,
      m.text,
      m.pending ? " (challenge window)" : null,
      m.score ? [" ", el("span", { class: m.score < 0 ? "pts neg" : "pts" }, (m.score > 0 ? "+" : "") + m.score)] : null,
      m.total !== null && m.total !== undefined ? [" ", el("span", { class: "tot" }, m.total)] : null));
  }
  return list;
}

export function replaceChildren(id, node) {
  const target = document.getElementById(id);
  if (target) target.replaceChildren(node);
}
