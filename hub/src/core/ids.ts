// Id and timestamp formats of the logstream: `evt_<YYYYMMDDTHHMMSS>_<12 hex>`, `art_…`, and
// second-precision ISO 8601 UTC timestamps. Randomness is injected by the caller.

export type IdPrefix = 'evt' | 'art' | 'rep';

const ID_PATTERN = /^(evt|art)_\d{8}T\d{6}_[0-9a-f]{12}$/;

/** `YYYY-MM-DDTHH:MM:SSZ` for a date (seconds precision, UTC). */
export function isoSeconds(date: Date): string {
  return date.toISOString().slice(0, 19) + 'Z';
}

/** An id of the form `<prefix>_<YYYYMMDDTHHMMSS>_<hex12>`. */
export function makeId(prefix: 'evt' | 'art', date: Date, hex12: string): string {
  if (!/^[0-9a-f]{12}$/.test(hex12)) throw new Error('makeId needs 12 lowercase hex characters');
  const stamp = date.toISOString().slice(0, 19).replace(/[-:]/g, '');
  return `${prefix}_${stamp}_${hex12}`;
}

export function isEventId(value: string): boolean {
  return ID_PATTERN.test(value) && value.startsWith('evt_');
}

export function isArtifactId(value: string): boolean {
  return ID_PATTERN.test(value) && value.startsWith('art_');
}

export const REPLICA_ID_PATTERN = /^rep_[0-9a-f]{12}$/;
