// "Your turn" where a player looks when the tab is in the background (issue 24): the
// tab's title starts with "● Your turn", the favicon gets a red dot, and, when the
// player ticks "Sound", a short tone plays as the turn comes (Web Audio; no file).
const BASE_TITLE = document.title;
const ICON = document.querySelector("link[rel=icon]");
const BASE_ICON = ICON?.getAttribute("href") ?? "/static/meeple.svg";
const TURN_ICON = "/static/meeple-turn.svg";
const SOUND = "meeple.sound";
let on = false;

const sound = document.getElementById("sound");
if (sound) {
  sound.checked = localStorage.getItem(SOUND) === "1";
  sound.addEventListener("change", () => localStorage.setItem(SOUND, sound.checked ? "1" : "0"));
}

function beep() {
  if (!sound?.checked) return;
  try {
    const audio = new AudioContext();
    const tone = audio.createOscillator();
    const gain = audio.createGain();
    tone.frequency.value = 660;
    gain.gain.setValueAtTime(0.15, audio.currentTime);
    gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + 0.35);
    tone.connect(gain).connect(audio.destination);
    tone.start();
    tone.stop(audio.currentTime + 0.35);
    tone.addEventListener("ended", () => audio.close());
  } catch { /* no audio here: the title and the icon still say it */ }
}

// Call with whether it is this seat's turn now; the alert changes only on a change.
export function turnAlert(yours) {
  if (yours === on) return;
  on = yours;
  document.title = yours ? `● Your turn · ${BASE_TITLE}` : BASE_TITLE;
  ICON?.setAttribute("href", yours ? TURN_ICON : BASE_ICON);
  if (yours) beep();
}
