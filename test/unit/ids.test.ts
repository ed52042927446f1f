import { describe, expect, it } from 'vitest';

import { randomBytes } from 'node:crypto';

import { REPLICA_ID_PATTERN, eventIdHex, isArtifactId, isEventId, isoSeconds, makeId } from '../../hub/src/core/ids.js';

const DATE = new Date('2026-01-31T12:34:56.789Z');

describe('isoSeconds', () => {
  it('renders UTC with seconds precision and a Z', () => {
    expect(isoSeconds(DATE)).toBe('2026-01-31T12:34:56Z');
    expect(isoSeconds(new Date('2026-12-31T23:59:59.999Z'))).toBe('2026-12-31T23:59:59Z');
    expect(isoSeconds(new Date(0))).toBe('1970-01-01T00:00:00Z');
  });

  it('always matches YYYY-MM-DDTHH:MM:SSZ', () => {
    for (const ms of [0, 1, 999, 1_769_860_800_123, 4_102_444_799_999])
      expect(isoSeconds(new Date(ms))).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
  });
});

describe('makeId', () => {
  it('builds <prefix>_<YYYYMMDDTHHMMSS>_<12 hex>', () => {
    expect(makeId('evt', DATE, '0123456789ab')).toBe('evt_20260131T123456_0123456789ab');
    expect(makeId('art', DATE, 'ffffffffffff')).toBe('art_20260131T123456_ffffffffffff');
  });

  it.each(['0123456789AB', '0123456789a', '0123456789abc', 'zzzzzzzzzzzz', '', '0123456789a '])(
    'refuses the suffix %j',
    (hex) => {
      expect(() => makeId('evt', DATE, hex)).toThrow(/12 lowercase hex/);
    },
  );

  it('gives ids the predicates recognise', () => {
    const evt = makeId('evt', DATE, 'abcdefabcdef');
    const art = makeId('art', DATE, 'abcdefabcdef');
    expect(isEventId(evt)).toBe(true);
    expect(isArtifactId(evt)).toBe(false);
    expect(isArtifactId(art)).toBe(true);
    expect(isEventId(art)).toBe(false);
  });
});

describe('eventIdHex', () => {
  const random = (bytes: number): string => randomBytes(bytes).toString('hex');

  it('starts with the 1/256th of the second (2 hex), then 10 random hex: a valid event id', () => {
    expect(eventIdHex(new Date('2026-01-31T12:34:56.000Z'), () => 'abcdefabcd')).toBe('00abcdefabcd');
    expect(eventIdHex(new Date('2026-01-31T12:34:56.500Z'), () => 'abcdefabcd')).toBe('80abcdefabcd');
    expect(eventIdHex(new Date('2026-01-31T12:34:56.999Z'), () => 'abcdefabcd')).toBe('ffabcdefabcd');
    expect(isEventId(makeId('evt', DATE, eventIdHex(DATE, random)))).toBe(true);
  });

  it('asks for 5 random bytes', () => {
    const asked: number[] = [];
    eventIdHex(DATE, (bytes) => {
      asked.push(bytes);
      return '0'.repeat(bytes * 2);
    });
    expect(asked).toEqual([5]);
  });

  it('sorts ids of one second in time order (one commit lands on one leaf of the id index)', () => {
    const ids = Array.from({ length: 1000 }, (_, ms) => {
      const date = new Date(Date.UTC(2026, 0, 31, 12, 34, 56, ms));
      return makeId('evt', date, eventIdHex(date, random));
    });
    const ticks = ids.map((id) => id.slice(-12, -10));
    expect([...ticks].sort()).toEqual(ticks);
    expect(new Set(ticks).size).toBe(256);
  });
});

describe('isEventId / isArtifactId', () => {
  it.each([
    'evt_20260131T123456_0123456789a',
    'evt_20260131T123456_0123456789abc',
    'evt_20260131T123456_0123456789AB',
    'evt_2026013T123456_0123456789ab',
    'evt_20260131123456_0123456789ab',
    'EVT_20260131T123456_0123456789ab',
    ' evt_20260131T123456_0123456789ab',
    'rep_20260131T123456_0123456789ab',
    'evt-20260131T123456-0123456789ab',
    '',
  ])('rejects %j', (value) => {
    expect(isEventId(value)).toBe(false);
    expect(isArtifactId(value.replace(/^evt/, 'art'))).toBe(false);
  });
});

describe('REPLICA_ID_PATTERN', () => {
  it('matches rep_ and 12 lowercase hex characters only', () => {
    expect(REPLICA_ID_PATTERN.test('rep_0123456789ab')).toBe(true);
    expect(REPLICA_ID_PATTERN.test('rep_0123456789AB')).toBe(false);
    expect(REPLICA_ID_PATTERN.test('rep_0123456789a')).toBe(false);
    expect(REPLICA_ID_PATTERN.test('rep_0123456789abc')).toBe(false);
    expect(REPLICA_ID_PATTERN.test('evt_0123456789ab')).toBe(false);
  });
});
