// Deltas of meeple-web/1 (docs/protocols/web.md, "Deltas"): a topic's next state from
// one frame, either a whole snapshot or an RFC 6902 patch (add, remove, replace) on the
// snapshot held. The server sends a delta only on top of the snapshot it last sent.

// The state after `msg`, given the state `held` at `heldSeq` (null: none yet); null
// when the frame is not newer or does not apply to what is held.
export function follow(held, heldSeq, msg) {
  if (msg.seq <= heldSeq && held !== null) return null;
  if (msg.patch === undefined) return msg.data;
  if (held === null || msg.base !== heldSeq) return null;
  const doc = structuredClone(held);
  let root = doc;
  for (const op of msg.patch) {
    if (op.path === "") { root = structuredClone(op.value); continue; }
    const keys = op.path.split("/").slice(1).map((k) => k.replaceAll("~1", "/").replaceAll("~0", "~"));
    const last = keys.pop();
    let node = root;
    for (const k of keys) node = node[Array.isArray(node) ? Number(k) : k];
    const value = op.value === undefined ? undefined : structuredClone(op.value);
    if (Array.isArray(node)) {
      if (op.op === "remove") node.splice(Number(last), 1);
      else if (op.op === "add" && last === "-") node.push(value);
      else if (op.op === "add") node.splice(Number(last), 0, value);
      else node[Number(last)] = value;
    } else if (op.op === "remove") delete node[last];
    else node[last] = value;
  }
  return root;
}
