// Version-vector drift between this hub and a peer, in events: how many the peer has that we lack
// (behind) and how many we have that it lacks (ahead). Pure.

import type { VersionVector } from '../state/hub-types.js';

export interface Drift {
  behind: number;
  ahead: number;
  /** Origins where the two differ, with both counters. */
  origins: { origin: string; local: number; remote: number }[];
}

export function drift(local: VersionVector, remote: VersionVector | null): Drift | null {
  if (!remote) return null;
  const origins = new Set([...Object.keys(local), ...Object.keys(remote)]);
  const out: Drift = { behind: 0, ahead: 0, origins: [] };
  for (const origin of [...origins].sort()) {
    const l = local[origin] ?? 0;
    const r = remote[origin] ?? 0;
    if (r > l) out.behind += r - l;
    if (l > r) out.ahead += l - r;
    if (l !== r) out.origins.push({ origin, local: l, remote: r });
  }
  return out;
}
