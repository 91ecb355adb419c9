// The words the pages show for stored codes (issue 24, "Wording"): the same table as
// meeple/web/wording.py, which a test compares with this one.
export const END_REASONS = {
  "went-out": "went out",
  "all-tiles-used": "went out",
  "scoreless-turns": "six scoreless turns",
  "passes": "everyone passed",
  "time": "out of time",
  "timeout": "out of time",
  "admin": "stopped by the referee",
  "aborted": "aborted",
  "disconnect": "a player left",
  "resigned": "resigned",
  "win": "a player won",
  "finished": "finished",
  "abandoned": "abandoned",
  "halted": "stopped by the server",
};

export const LEXICON_NAMES = { enable: "ENABLE", wordnik: "Wordnik", gcide: "GCIDE", web2: "Webster's 2nd" };

export function reasonText(reason) {
  if (!reason) return "—";
  const key = String(reason).trim().toLowerCase().replace(/[\s_]+/g, "-");
  return END_REASONS[key] ?? key.replaceAll("-", " ");
}

export function lexiconLabel(name) {
  if (!name) return "unknown";
  return LEXICON_NAMES[name] ?? name;
}
