// Id and timestamp formats of the logstream: `evt_<YYYYMMDDTHHMMSS>_<12 hex>`, `art_…`, and
// second-precision ISO 8601 UTC timestamps. Randomness is injected by the caller.

export type IdPrefix = 'evt' | 'art' | 'rep';

const HEX12 = /^[0-9a-f]{12}$/;
const ID_PATTERN = /^(evt|art)_\d{8}T\d{6}_[0-9a-f]{12}$/;

/** `YYYY-MM-DDTHH:MM:SSZ` for a date (seconds precision, UTC). */
export function isoSeconds(date: Date): string {
  return date.toISOString().slice(0, 19) + 'Z';
}

/** An id of the form `<prefix>_<YYYYMMDDTHHMMSS>_<hex12>`. */
export function makeId(prefix: 'evt' | 'art', date: Date, hex12: string): string {
  return makeIdFromIso(prefix, date.toISOString(), hex12);
}

/** makeId from the date's `toISOString()`, for a caller that also needs it (an append's created_at). */
export function makeIdFromIso(prefix: 'evt' | 'art', iso: string, hex12: string): string {
  if (!HEX12.test(hex12)) throw new Error('makeId needs 12 lowercase hex characters');
  const stamp = iso.slice(0, 19).replace(/[-:]/g, '');
  return `${prefix}_${stamp}_${hex12}`;
}

/**
 * The 12 hex of an event id: 2 hex of the 1/256th of its second, then 10 random hex. Ids made in the
 * same ~4 ms sort together, so one commit's events land on the same leaf of the id index instead of
 * one random leaf each; over a second that keeps as many random bits as 12 random hex (8 bits of time
 * traded for 8 of chance: two ids collide only within the same 4 ms).
 */
export function eventIdHex(date: Date, randomHex: (bytes: number) => string): string {
  const tick = Math.floor((date.getUTCMilliseconds() * 256) / 1000);
  return tick.toString(16).padStart(2, '0') + randomHex(5);
}

export function isEventId(value: string): boolean {
  return ID_PATTERN.test(value) && value.startsWith('evt_');
}

export function isArtifactId(value: string): boolean {
  return ID_PATTERN.test(value) && value.startsWith('art_');
}

export const REPLICA_ID_PATTERN = /^rep_[0-9a-f]{12}$/;
