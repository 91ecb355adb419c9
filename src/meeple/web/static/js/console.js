// The console: a change on the console topic reloads the server-rendered body (few
// viewers, and one template). Admin
// buttons post with fetch so the page stays; without JavaScript they are plain forms.
import { watch } from "./ws.js";

const body = document.getElementById("console-live");
let loading = false;
let shownAt = performance.now();

// The running clocks count down between the referee's changes (each change redraws them).
const format = (ms) => `${Math.floor(ms / 60000)}:${String(Math.floor(ms / 1000) % 60).padStart(2, "0")}`;
setInterval(() => {
  const elapsed = performance.now() - shownAt;
  for (const el of body.querySelectorAll("[data-ticking]")) {
    el.textContent = format(Math.max(0, Number(el.dataset.ms) - elapsed));
  }
}, 250);
let again = false;

async function refresh() {
  if (loading) { again = true; return; }
  loading = true;
  try {
    const response = await fetch("/cmpn402/fragment", { credentials: "same-origin" });
    if (response.ok) { body.innerHTML = await response.text(); shownAt = performance.now(); }
  } finally {
    loading = false;
    if (again) { again = false; refresh(); }
  }
}

watch([{ topic: "console" }], (msg) => { if (msg.type === "console") refresh(); });

const flash = (text) => {
  let p = document.querySelector(".flash");
  if (!p) { p = document.createElement("p"); p.className = "flash"; p.setAttribute("role", "status"); document.getElementById("admin").before(p); }
  p.textContent = text;
};

document.querySelectorAll("#admin form.actions button, #admin form.withdraw button").forEach((button) => {
  button.addEventListener("click", async (event) => {
    event.preventDefault();
    const form = button.form;
    const data = new URLSearchParams(new FormData(form));
    if (button.name) data.set(button.name, button.value);
    // form.action would be the button named "action": read the attribute.
    const response = await fetch(form.getAttribute("action"), {
      method: "POST", body: data, credentials: "same-origin", headers: { Accept: "application/json" },
    });
    const answer = await response.json().catch(() => ({ message: response.statusText }));
    flash(answer.message);
    refresh();
  });
});
document.getElementById("console-live").dataset.ready = "1";
