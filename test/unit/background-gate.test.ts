// The hub's background gate (hub/src/background-gate.ts): background readers wait for foreground work
// (a memory open), for requests being served, for the promises they are told to follow, and for a
// quiet moment without requests; a deadline still lets them run on a hub that is never quiet. Real timers; what is asserted is the
// order of events, never a duration.

import { describe, expect, it } from 'vitest';

import { createBackgroundGate, LONG_REQUEST_MS } from '../../hub/src/background-gate.js';

const turn = (ms = 5): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function held(): { promise: Promise<void>; release: () => void; fail: () => void } {
  let release: () => void = () => undefined;
  let fail: () => void = () => undefined;
  const promise = new Promise<void>((resolve, reject) => {
    release = resolve;
    fail = () => reject(new Error('the open failed'));
  });
  return { promise, release, fail };
}

describe('background gate', () => {
  it('waits while foreground work runs, asking its source afresh each time', async () => {
    const gate = createBackgroundGate();
    let work: Promise<void> | undefined;
    gate.addForeground(() => work);
    const events: string[] = [];
    const first = held();
    work = first.promise;
    const quiet = gate.whenQuiet({ quietMs: 1, maxWaitMs: 60_000 }).then((o) => events.push(`gate ${o}`));
    const done = gate.whenQuiet({ quietMs: 0, maxWaitMs: 60_000 }).then(() => events.push('foreground done'));
    await turn(50);
    // A second open starts as the first ends (a failed open retried): still foreground work.
    const second = held();
    work = second.promise;
    events.push('first open failed');
    first.fail();
    await turn(50);
    events.push('second open done');
    work = undefined;
    second.release();
    await Promise.all([quiet, done]);
    expect(events.slice(0, 2)).toEqual(['first open failed', 'second open done']);
    expect(events.slice(2).sort()).toEqual(['foreground done', 'gate quiet']);
  });

  it('waits for a quiet moment after the last request, and for the promises it follows', async () => {
    // The gate's clock is this test's: a slow machine cannot make a quiet moment between two requests.
    let clock = 0;
    const gate = createBackgroundGate(() => clock);
    const seed = held();
    const events: string[] = [];
    const quiet = gate.whenQuiet({ quietMs: 20, maxWaitMs: 60_000, after: [seed.promise] }).then((o) => events.push(`gate ${o}`));
    clock += 1_000; // long past the hub's start, but the seed is still reading
    await turn(60);
    events.push('seed done');
    seed.release();
    // Requests keep coming for a while: each one pushes the quiet moment back.
    for (let i = 0; i < 10; i++) {
      clock += 10;
      gate.request()();
      await turn(10);
    }
    events.push('last request');
    clock += 20;
    await quiet;
    expect(events).toEqual(['seed done', 'last request', 'gate quiet']);
  });

  it('a request being served holds background work until it ends; a long-lived one stops counting', async () => {
    let clock = 0;
    const gate = createBackgroundGate(() => clock);
    const events: string[] = [];
    const end = gate.request(); // e.g. palace_status loading the census on a fresh hub
    clock += 5_000;
    const go = gate.whenQuiet({ quietMs: 0, maxWaitMs: 60_000 }).then((o) => events.push(`gate ${o}`));
    await turn(60);
    events.push('request ended');
    end();
    await go;
    // A long-poll (or a notification stream) open for longer than LONG_REQUEST_MS is not the foreground.
    gate.request();
    const later = gate.whenQuiet({ quietMs: 0, maxWaitMs: 60_000 }).then((o) => events.push(`gate ${o} again`));
    await turn(60);
    events.push('the long-poll is old');
    clock += LONG_REQUEST_MS;
    await later;
    expect(events).toEqual(['request ended', 'gate quiet', 'the long-poll is old', 'gate quiet again']);
  });

  it('a hub that is never quiet still lets the check run at the deadline; an abort ends the wait', async () => {
    const gate = createBackgroundGate();
    gate.addForeground(() => new Promise<void>(() => undefined)); // an open that never ends
    expect(await gate.whenQuiet({ quietMs: 1, maxWaitMs: 30 })).toBe('deadline');
    const stop = new AbortController();
    const waiting = gate.whenQuiet({ quietMs: 1, maxWaitMs: 60_000, signal: stop.signal });
    await turn();
    stop.abort();
    expect(await waiting).toBe('aborted');
  });
});
