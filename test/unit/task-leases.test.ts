// The task projection's coordination rules (pure): the first claim wins, claim.expired reopens a
// task unless a renewal outran it (in either log order), late patches are flagged, depends_on and
// reservations are read from the events. Event builders from test/helpers/fixtures.ts.

import { describe, expect, it } from 'vitest';

import { projectTask } from '../../hub/src/core/task-state.js';
import type { LogEvent } from '../../hub/src/core/types.js';
import { logEvent } from '../helpers/fixtures.js';

const CORR = 'task_lease_demo';
const T30 = '2026-01-31T12:30:00.000Z';
const T60 = '2026-01-31T13:00:00.000Z';

const request = (extra: Partial<LogEvent> = {}): LogEvent =>
  logEvent({ type: 'task.request', status: 'open', from_agent: 'req', to_agent: '*', correlation_id: CORR, ...extra });
const claim = (by: string, end = T30, extra: Partial<LogEvent> = {}): LogEvent =>
  logEvent({ type: 'event.ack', status: 'claimed', from_agent: by, correlation_id: CORR, metadata: { lease_expires_at: end }, ...extra });
const renew = (c: LogEvent, end: string): LogEvent =>
  logEvent({ type: 'claim.renewed', from_agent: c.from_agent, correlation_id: CORR, metadata: { claim_event_id: c.id, lease_expires_at: end } });
const expire = (c: LogEvent, seen: string | null = T30): LogEvent =>
  logEvent({
    type: 'claim.expired',
    from_agent: 'hub',
    correlation_id: CORR,
    body: JSON.stringify({ reason: 'lease expired', claimed_event_id: c.id, worker: c.from_agent, ...(seen ? { lease_expires_at: seen } : {}) }),
  });

describe('claims and leases in the task projection', () => {
  it('keeps the first claim when a second agent claims the same open task', () => {
    const req = request();
    const first = claim('a');
    const second = claim('b');
    const state = projectTask(CORR, [req, first, second]);
    expect(state).toMatchObject({ status: 'claimed', worker: 'a', claim_event_id: first.id, lease_expires_at: T30 });
    expect(state.history.map((h) => h.by)).toEqual(['req', 'a']);
  });

  it('settles concurrent claims from two replicas on the earlier HLC stamp, whatever the arrival order', () => {
    const req = request();
    const early = claim('a', T30, { hlc: '1700000000100-000000-rep_aaaaaaaaaaaa' });
    const late = claim('b', T30, { hlc: '1700000000200-000000-rep_bbbbbbbbbbbb' });
    expect(projectTask(CORR, [req, early, late]).worker).toBe('a');
    expect(projectTask(CORR, [req, late, early]).worker).toBe('a');
    expect(projectTask(CORR, [req, late, early]).claim_event_id).toBe(early.id);
  });

  it('reopens the task on claim.expired, lets another agent claim it, and flags the old claimer\'s patch', () => {
    const req = request();
    const c = claim('a');
    const ex = expire(c);
    const open = projectTask(CORR, [req, c, ex]);
    expect(open).toMatchObject({ status: 'open', worker: null, lease_expired: true, lease_expires_at: null, claim_event_id: null });
    expect(open.history.at(-1)).toMatchObject({ from: 'claimed', to: 'open', event_type: 'claim.expired', expected: true });

    const reclaim = claim('b', T60);
    const late = logEvent({ type: 'patch.ready', status: 'ready', from_agent: 'a', correlation_id: CORR });
    const after = projectTask(CORR, [req, c, ex, reclaim, late]);
    expect(after.late_patch).toBe(true);
    expect(projectTask(CORR, [req, c, ex, reclaim])).toMatchObject({ status: 'claimed', worker: 'b', lease_expired: false, late_patch: false });
  });

  it('ignores a claim.expired that a renewal outran, in either log order', () => {
    const req = request();
    const c = claim('a');
    const r = renew(c, T60);
    const ex = expire(c, T30);
    expect(projectTask(CORR, [req, c, r, ex])).toMatchObject({ status: 'claimed', worker: 'a', lease_expires_at: T60 });
    expect(projectTask(CORR, [req, c, ex, r])).toMatchObject({ status: 'claimed', worker: 'a', lease_expires_at: T60, lease_expired: false });
  });

  it('does not let a renewal revive a claim released by hand, nor a stranger renew', () => {
    const req = request();
    const c = claim('a');
    const released = expire(c, null);
    expect(projectTask(CORR, [req, c, released, renew(c, T60)]).status).toBe('open');
    const stranger = logEvent({ type: 'claim.renewed', from_agent: 'b', correlation_id: CORR, metadata: { claim_event_id: c.id, lease_expires_at: T60 } });
    expect(projectTask(CORR, [req, c, stranger]).lease_expires_at).toBe(T30);
  });

  it('ignores a claim.expired naming an older claim', () => {
    const req = request();
    const c1 = claim('a');
    const ex1 = expire(c1);
    const c2 = claim('b', T60);
    expect(projectTask(CORR, [req, c1, ex1, c2, expire(c1)])).toMatchObject({ status: 'claimed', worker: 'b' });
  });

  it('reads depends_on from metadata (or a JSON body) and drops a self-dependency', () => {
    expect(projectTask(CORR, [request({ metadata: { depends_on: ['task_a', CORR, 'task_b'] } })]).depends_on).toEqual(['task_a', 'task_b']);
    expect(projectTask(CORR, [request({ body: JSON.stringify({ goal: 'x', depends_on: ['task_c'] }) })]).depends_on).toEqual(['task_c']);
    expect(projectTask(CORR, [request({ body: 'Goal: fix {depends_on}' })]).depends_on).toEqual([]);
  });

  it('lists reservations made for the task until released, and none once the task is done', () => {
    const req = request();
    const reserved = logEvent({
      type: 'file.reserved',
      from_agent: 'a',
      correlation_id: CORR,
      body: JSON.stringify({ paths: ['src/**'], exclusive: true, expires_at: T60, correlation_id: CORR }),
    });
    const state = projectTask(CORR, [req, reserved]);
    expect(state.reservations).toEqual([
      { reservation_id: reserved.id, agent: 'a', stream: reserved.stream, paths: ['src/**'], exclusive: true, expires_at: T60 },
    ]);
    const released = logEvent({ type: 'file.released', from_agent: 'a', correlation_id: CORR, body: JSON.stringify({ reservation_id: reserved.id }) });
    expect(projectTask(CORR, [req, reserved, released]).reservations).toEqual([]);
    const failed = logEvent({ type: 'task.reply', status: 'failed', from_agent: 'a', correlation_id: CORR });
    expect(projectTask(CORR, [req, reserved, failed]).reservations).toEqual([]);
  });
});
