import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { formatHlc, observe, parseHlc, tick, type HlcState } from '../../hub/src/core/hlc.js';

const REPLICA = 'rep_0123456789ab';

describe('formatHlc / parseHlc', () => {
  it('renders 13-digit ms, a 6-hex-digit counter and the replica', () => {
    expect(formatHlc({ ms: 1_769_860_800_000, counter: 10 }, REPLICA)).toBe(
      `1769860800000-00000a-${REPLICA}`,
    );
    expect(formatHlc({ ms: 0, counter: 0 }, 'r')).toBe('0000000000000-000000-r');
    expect(formatHlc({ ms: 5, counter: 0xffffff }, 'r')).toBe('0000000000005-ffffff-r');
  });

  it('parses what it formats', () => {
    expect(parseHlc(`1769860800000-00000a-${REPLICA}`)).toEqual({
      ms: 1_769_860_800_000,
      counter: 10,
      replica: REPLICA,
    });
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 9_999_999_999_999 }),
        fc.integer({ min: 0, max: 0xffffff }),
        fc.stringMatching(/^[a-z0-9_-]{1,20}$/),
        (ms, counter, replica) => {
          expect(parseHlc(formatHlc({ ms, counter }, replica))).toEqual({ ms, counter, replica });
        },
      ),
    );
  });

  it.each([
    '',
    'garbage',
    '1769860800000-00000a-',
    '176986080000-00000a-r',
    '1769860800000-0000a-r',
    '1769860800000-00000g-r',
    '1769860800000-00000A-r',
    '1769860800000_00000a_r',
  ])('returns undefined for the malformed stamp %j', (stamp) => {
    expect(parseHlc(stamp)).toBeUndefined();
  });

  it('sorts stamps of one replica in (ms, counter) order as plain strings', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 9_999_999_999_999 }),
        fc.integer({ min: 0, max: 0xffffff }),
        fc.integer({ min: 0, max: 9_999_999_999_999 }),
        fc.integer({ min: 0, max: 0xffffff }),
        (ms1, c1, ms2, c2) => {
          const a = formatHlc({ ms: ms1, counter: c1 }, REPLICA);
          const b = formatHlc({ ms: ms2, counter: c2 }, REPLICA);
          const numeric = ms1 === ms2 ? Math.sign(c1 - c2) : Math.sign(ms1 - ms2);
          const byString = a < b ? -1 : a > b ? 1 : 0;
          expect(byString).toBe(numeric);
        },
      ),
    );
  });
});

describe('tick', () => {
  it('jumps to the wall clock when it moved forward, resetting the counter', () => {
    expect(tick({ ms: 1000, counter: 7 }, 2000)).toEqual({ ms: 2000, counter: 0 });
  });

  it('steps the counter when the wall clock did not move', () => {
    expect(tick({ ms: 1000, counter: 7 }, 1000)).toEqual({ ms: 1000, counter: 8 });
  });

  it('steps the counter when the wall clock went backwards', () => {
    expect(tick({ ms: 5000, counter: 0 }, 1000)).toEqual({ ms: 5000, counter: 1 });
  });

  it('moves to the next millisecond when the counter is exhausted', () => {
    expect(tick({ ms: 1000, counter: 0xffffff }, 1000)).toEqual({ ms: 1001, counter: 0 });
    expect(tick({ ms: 1000, counter: 0xffffff }, 10)).toEqual({ ms: 1001, counter: 0 });
  });

  it('does not mutate its input', () => {
    const state: HlcState = { ms: 1000, counter: 1 };
    tick(state, 1000);
    expect(state).toEqual({ ms: 1000, counter: 1 });
  });
});

describe('observe', () => {
  it('adopts a remote stamp with a later ms', () => {
    expect(observe({ ms: 1000, counter: 9 }, formatHlc({ ms: 2000, counter: 3 }, 'rep_other'))).toEqual({
      ms: 2000,
      counter: 3,
    });
  });

  it('adopts a remote stamp with the same ms and a higher counter', () => {
    expect(observe({ ms: 1000, counter: 2 }, formatHlc({ ms: 1000, counter: 5 }, 'x'))).toEqual({
      ms: 1000,
      counter: 5,
    });
  });

  it('keeps its own state when the remote is behind or equal', () => {
    const state = { ms: 1000, counter: 5 };
    expect(observe(state, formatHlc({ ms: 999, counter: 0xffffff }, 'x'))).toBe(state);
    expect(observe(state, formatHlc({ ms: 1000, counter: 5 }, 'x'))).toBe(state);
    expect(observe(state, formatHlc({ ms: 1000, counter: 4 }, 'x'))).toBe(state);
  });

  it('ignores a malformed stamp', () => {
    const state = { ms: 1000, counter: 5 };
    expect(observe(state, 'not-a-stamp')).toBe(state);
  });

  it('makes the next local tick sort after the observed stamp', () => {
    const remote = formatHlc({ ms: 9000, counter: 4 }, 'rep_zzzzzzzzzzzz');
    const next = tick(observe({ ms: 1000, counter: 0 }, remote), 1500);
    expect(next).toEqual({ ms: 9000, counter: 5 });
    // The (ms, counter) prefix decides the order whatever the replica suffix.
    expect(formatHlc(next, 'rep_aaaaaaaaaaaa').slice(0, 20) > remote.slice(0, 20)).toBe(true);
  });
});

describe('clock monotonicity (property)', () => {
  type Step = { kind: 'tick'; now: number } | { kind: 'observe'; ms: number; counter: number };
  const step: fc.Arbitrary<Step> = fc.oneof(
    fc.record({ kind: fc.constant('tick' as const), now: fc.integer({ min: 0, max: 50 }) }),
    fc.record({
      kind: fc.constant('observe' as const),
      ms: fc.integer({ min: 0, max: 50 }),
      counter: fc.constantFrom(0, 1, 0xfffffe, 0xffffff),
    }),
  );

  it('every local tick stamps strictly after every earlier tick and every observed stamp, whatever the wall clock does', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), (steps) => {
        let state: HlcState = { ms: 0, counter: 0 };
        let highest = formatHlc(state, REPLICA);
        for (const s of steps) {
          if (s.kind === 'observe') {
            const remote = formatHlc({ ms: s.ms, counter: s.counter }, REPLICA);
            state = observe(state, remote);
            if (remote > highest) highest = remote;
          } else {
            state = tick(state, s.now);
            const stamp = formatHlc(state, REPLICA);
            expect(stamp > highest).toBe(true);
            highest = stamp;
          }
        }
      }),
    );
  });
});
