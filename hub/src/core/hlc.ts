// Hybrid logical clock stamps `<13-digit ms>-<6 hex counter>-<replica>`: lexicographic order is
// causal order. Pure value functions; the caller owns the state and the wall clock.

export interface HlcState {
  ms: number;
  counter: number;
}

const MAX_COUNTER = 0xffffff;
const HLC_PATTERN = /^(\d{13})-([0-9a-f]{6})-(.+)$/;

export function formatHlc(state: HlcState, replica: string): string {
  return `${String(state.ms).padStart(13, '0')}-${state.counter.toString(16).padStart(6, '0')}-${replica}`;
}

/** Parses a stamp; undefined when malformed. */
export function parseHlc(stamp: string): (HlcState & { replica: string }) | undefined {
  const m = HLC_PATTERN.exec(stamp);
  if (!m) return undefined;
  return { ms: Number(m[1]), counter: parseInt(m[2] ?? '0', 16), replica: m[3] ?? '' };
}

/** The next local stamp: wall time if it moved forward, else the counter steps. */
export function tick(state: HlcState, nowMs: number): HlcState {
  if (nowMs > state.ms) return { ms: nowMs, counter: 0 };
  if (state.counter >= MAX_COUNTER) return { ms: state.ms + 1, counter: 0 };
  return { ms: state.ms, counter: state.counter + 1 };
}

/** Adopts a remote stamp when it is ahead, so later local stamps sort after it. */
export function observe(state: HlcState, remote: string): HlcState {
  const r = parseHlc(remote);
  if (!r) return state;
  if (r.ms > state.ms || (r.ms === state.ms && r.counter > state.counter)) return { ms: r.ms, counter: r.counter };
  return state;
}
