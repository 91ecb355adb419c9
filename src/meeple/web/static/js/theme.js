// Light or dark pages (issue 34). The pages follow the system's scheme
// (prefers-color-scheme) until this browser picks one with the header's button; the pick
// is kept in localStorage and set as <html data-theme> before the body is drawn (this
// script is loaded in <head>, not deferred), so a dark page never flashes light. Picking
// the scheme the system has anyway forgets the pick: the page follows the system again.
const KEY = "meeple-theme";
const root = document.documentElement;
const system = window.matchMedia("(prefers-color-scheme: dark)");

function picked() {
  try {
    const value = window.localStorage.getItem(KEY);
    return value === "light" || value === "dark" ? value : null;
  } catch {
    return null; // storage refused (a private window's policy): follow the system
  }
}

function keep(value) {
  try {
    if (value === null) window.localStorage.removeItem(KEY);
    else window.localStorage.setItem(KEY, value);
  } catch {
    // not kept; this page still switches
  }
}

function apply(value) {
  if (value === null) delete root.dataset.theme;
  else root.dataset.theme = value;
}

function shown() {
  return picked() ?? (system.matches ? "dark" : "light");
}

apply(picked());

function wire() {
  const button = document.getElementById("theme");
  if (!button) return;
  const label = () => button.setAttribute("aria-pressed", String(shown() === "dark"));
  button.addEventListener("click", () => {
    const next = shown() === "dark" ? "light" : "dark";
    const value = next === (system.matches ? "dark" : "light") ? null : next;
    keep(value);
    apply(value);
    label();
  });
  system.addEventListener("change", label);
  // Another tab's pick applies here too.
  window.addEventListener("storage", (event) => {
    if (event.key === KEY) {
      apply(picked());
      label();
    }
  });
  label();
  button.hidden = false;
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", wire);
else wire();
