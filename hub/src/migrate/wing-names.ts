// Normalization of legacy wing names (MemPalace's `wing_<name>` prefix, free-form case and spaces)
// to palace's form: lower-case words joined by `-`. Pure; `palace migrate-wings` applies the plan.

/**
 * The normalized form of a wing name: a leading `wing_` / `wing-` (any case) dropped, lower-cased,
 * runs of spaces, underscores and other separators turned into one `-`, letters and digits of any
 * script, `.` and `-` kept, no leading or trailing `-`. A name with nothing left is kept as it was.
 */
export function normalizeWing(name: string): string {
  const stripped = name.trim().replace(/^wing[_-]/i, '');
  const normal = stripped
    .normalize('NFC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}.]+/gu, '-')
    .replace(/-+/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '');
  return normal === '' ? name : normal.slice(0, 128);
}

/** One proposed rename: the drawers of `from` move to `to`. */
export interface WingMove {
  from: string;
  to: string;
  drawers: number;
  /** `to` already holds drawers (of another name or its own): the wings merge. */
  merges: boolean;
}

/** The renames that normalize every wing of a palace (wings already normal are left out). */
export function planWingMoves(wings: Readonly<Record<string, number>>): WingMove[] {
  const moves: WingMove[] = [];
  const targets = new Map<string, number>();
  for (const name of Object.keys(wings)) {
    const to = normalizeWing(name);
    targets.set(to, (targets.get(to) ?? 0) + 1);
  }
  for (const [from, drawers] of Object.entries(wings).sort((a, b) => a[0].localeCompare(b[0]))) {
    const to = normalizeWing(from);
    if (to === from) continue;
    moves.push({ from, to, drawers, merges: (targets.get(to) ?? 0) > 1 || wings[to] !== undefined });
  }
  return moves;
}
