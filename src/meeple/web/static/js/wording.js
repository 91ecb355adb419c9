// The words the pages show for stored codes (issue 24, "Wording"). The table is
// wording.json, which meeple/web/wording.py reads too: one table, two readers.
import WORDING from "./wording.json" with { type: "json" };

export const END_REASONS = WORDING.end_reasons;
export const LEXICON_NAMES = WORDING.lexicon_names;

export function reasonText(reason) {
  if (!reason) return "—";
  const key = String(reason).trim().toLowerCase().replace(/[\s_]+/g, "-");
  return END_REASONS[key] ?? key.replaceAll("-", " ");
}

export function lexiconLabel(name) {
  if (!name) return "unknown";
  return LEXICON_NAMES[name] ?? name;
}
