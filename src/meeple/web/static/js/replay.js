// Replay stepping: ←/→ one step, Home/End first/last, and the buttons; the URL keeps ?step=.
import { renderBoard, renderPanel, replaceChildren } from "./render.js";

const steps = JSON.parse(document.getElementById("replay-data").textContent);
const list = document.getElementById("steps");
let step = Number(new URLSearchParams(location.search).get("step") ?? steps.length - 1);
if (!Number.isInteger(step) || step < 0 || step >= steps.length) step = steps.length - 1;

function show(n) {
  step = Math.max(0, Math.min(n, steps.length - 1));
  const view = steps[step].view;
  replaceChildren("board", renderBoard(view));
  replaceChildren("panel", renderPanel(view));
  document.getElementById("stepno").textContent = String(step);
  list.querySelectorAll(":scope > li").forEach((li, i) => li.classList.toggle("current", i === step));
  list.children[step]?.scrollIntoView({ block: "nearest" });
  history.replaceState(null, "", `?step=${step}`);
}

const go = { first: () => show(0), prev: () => show(step - 1), next: () => show(step + 1), last: () => show(steps.length - 1) };
document.querySelectorAll("[data-go]").forEach((a) => {
  a.addEventListener("click", (event) => { event.preventDefault(); go[a.dataset.go](); });
});
list.querySelectorAll(":scope > li > a").forEach((a, i) => {
  a.addEventListener("click", (event) => { event.preventDefault(); show(i); });
});
document.addEventListener("keydown", (event) => {
  const key = { ArrowLeft: "prev", ArrowRight: "next", Home: "first", End: "last" }[event.key];
  if (key && !event.altKey && !event.ctrlKey && !event.metaKey) { event.preventDefault(); go[key](); }
});
document.getElementById("controls").dataset.ready = "1";
