// The players' clocks on the play and watch pages (issue 24; docs/web.md, "Clocks").
// A view's `clocks` gives each player's remaining seconds as the server made it and whose
// clock runs; the page counts the running one down from when the view arrived, shows
// low time (under `low` seconds), Scrabble's overtime (below zero, with the penalty so
// far) and a flag. The server decides the flag; the page only shows it.

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  for (const c of children.flat()) if (c !== null) node.append(c);
  return node;
}

let shown = null; // { target, clocks, players, at }
let ticker = null;

// "25:00", "0:07", "−1:05" (overtime).
export function clockText(seconds) {
  const minus = seconds < 0;
  const whole = minus ? Math.ceil(-seconds) : Math.ceil(seconds);
  const text = `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, "0")}`;
  return minus ? `−${text}` : text;
}

function left(i) {
  const c = shown.clocks;
  const run = c.running === i ? (performance.now() - shown.at) / 1000 : 0;
  return Math.max(c.remaining[i] - run, -c.control.overtime);
}

function penalty(c, seconds) {
  if (seconds >= 0 || !c.control.penalty) return 0;
  return c.control.penalty * Math.ceil(-seconds / 60 - 1e-9);
}

// Redraw the clocks if what they show changed (or `always`: a new view). The ticker asks
// four times a second and the text changes once a second: rebuilding them on every tick
// made the page lay out and paint four frames a second for as long as a clock ran (eight
// times the CPU of an idle play page, measured in Chromium; issue 33).
let drawn = null;
function draw(always = false) {
  const { target, clocks: c, players } = shown;
  const state = players.map((name, i) => {
    const s = left(i);
    const flagged = c.flagged.includes(i);
    const cls = ["clock", `p${i}`, c.running === i ? "running" : null, s <= c.low ? "low" : null,
      s < 0 ? "overtime" : null, flagged ? "flagged" : null].filter(Boolean).join(" ");
    return { name, cls, flagged, text: clockText(s), cost: penalty(c, s) };
  });
  const key = JSON.stringify(state);
  if (!always && key === drawn) return;
  drawn = key;
  const rows = state.map(({ name, cls, flagged, text, cost }, i) =>
    el("li", { class: cls, "data-player": i },
      el("span", { class: "who" }, name),
      el("span", { class: "time", role: "timer", "aria-label": `${name}'s clock` }, text),
      flagged ? el("span", { class: "flag", title: "out of time" }, " ⚑ out of time")
        : cost ? el("span", { class: "penalty" }, ` −${cost} pts`) : null));
  const note = c.control.overtime
    ? `${c.control.spec.split("+")[0]} min each · overtime ${c.control.overtime / 60} min, −${c.control.penalty} a minute`
    : `${c.control.spec.replace("+", " min + ")} s a move`;
  target.replaceChildren(el("ul", { class: "clocks" }, rows), el("p", { class: "clock-rule" }, note));
}

// Show `clocks` (a view's, or null: none) for `players` in the element `id`.
export function showClocks(id, clocks, players) {
  const target = document.getElementById(id);
  if (!target) return;
  // Beside the board on a wide page, above it on a phone (meeple.css, .game.clocked).
  target.parentElement.classList.toggle("clocked", Boolean(clocks));
  if (!clocks) {
    target.replaceChildren();
    target.hidden = true;
    shown = null;
    clearInterval(ticker);
    ticker = null;
    return;
  }
  target.hidden = false;
  shown = { target, clocks, players, at: performance.now() };
  draw(true);
  clearInterval(ticker);
  ticker = clocks.running === null ? null : setInterval(() => shown && draw(), 250);
}
