// The game fits the screen while it is played (issue 34): the board is as large as the
// window allows below what sits above it (never wider than its column, never under
// MIN_BOARD px), and the move list takes the height left under it, so board, rack,
// clocks, scores and the last moves are all on screen at 1280×800 and on a 390×844
// phone without scrolling. CSS places them (meeple.css, "The play page fits the
// screen"); this measures what CSS cannot: the height above the board.
const MIN_BOARD = 260;
// Two lines of the move list at least (it scrolls within): on a phone a Spectrangle
// board at MIN_BOARD and a header of three rows leave no more.
const MIN_MOVES = 48;
const MARGIN = 8;

function documentTop(node) {
  return node.getBoundingClientRect().top + window.scrollY;
}

export function fit() {
  const play = document.getElementById("play");
  if (!play || play.hidden) return;
  const board = document.getElementById("board");
  const moves = document.querySelector("#moves .moves") ?? document.getElementById("moves");
  // The board's height is what is left under what sits above it (its width is the
  // column's: CSS caps it).
  const room = window.innerHeight - documentTop(board) - MARGIN;
  board.style.setProperty("--board-size", `${Math.floor(Math.max(MIN_BOARD, room))}px`);
  // One column (a phone): the rack, buttons, scores and the first lines of the moves
  // come under the board; the board gives up what they lack.
  const aside = document.querySelector("#play aside");
  // A board narrower by N px is less than N px shorter (Spectrangle's triangle): ask
  // again, a few times, until nothing lacks.
  for (let i = 0; i < 4 && moves && aside
       && aside.getBoundingClientRect().top >= board.getBoundingClientRect().bottom; i++) {
    const lacking = documentTop(moves) + MIN_MOVES + MARGIN - window.innerHeight;
    const width = board.getBoundingClientRect().width;
    if (lacking <= 0 || width <= MIN_BOARD) break;
    const size = Math.max(MIN_BOARD, width - Math.ceil(lacking));
    board.style.setProperty("--board-size", `${Math.floor(size)}px`);
  }
  if (moves) {
    const left = window.innerHeight - documentTop(moves) - MARGIN;
    moves.style.maxHeight = `${Math.floor(Math.max(MIN_MOVES, left))}px`;
  }
}

let queued = false;
export function fitSoon() {
  if (queued) return;
  queued = true;
  requestAnimationFrame(() => { queued = false; fit(); });
}

window.addEventListener("resize", fitSoon);
window.visualViewport?.addEventListener("resize", fitSoon);

// What sits above the board or, on a phone, above the moves can change height after a
// fit with no resize of the window (the header's links wrapping once its button is
// drawn, a status line of two rows, the scores' table filled in): fit again then. A fit
// that changes nothing of these changes no size, so this does not loop.
if (typeof ResizeObserver === "function") {
  const watcher = new ResizeObserver(fitSoon);
  for (const selector of ["header.top", "#status", ".seat-bar", "#mine", "#controls", "#panel"]) {
    const node = document.querySelector(selector);
    if (node) watcher.observe(node);
  }
}
