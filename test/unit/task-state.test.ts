import { describe, expect, it } from 'vitest';

import { isTerminal, projectTask, projectTasks, statusCarried } from '../../hub/src/core/task-state.js';
import type { LogEvent } from '../../hub/src/core/types.js';
import { logEvent } from '../helpers/fixtures.js';

const REQUESTER = 'laptop-claude';
const WORKER = 'desktop-codex';
const CORR = 'task_fix_login_0a1b2c3d';

/** A task.request from the requester to the worker, as palace_event_append would store it. */
function request(overrides: Partial<LogEvent> = {}): LogEvent {
  return logEvent({
    type: 'task.request',
    status: 'open',
    from_agent: REQUESTER,
    to_agent: WORKER,
    correlation_id: CORR,
    branch: 'fix/login',
    base_commit: 'abc1234',
    body: 'Goal:\nfix login',
    ...overrides,
  });
}

function ack(target: LogEvent, by: string, status: LogEvent['status']): LogEvent {
  return logEvent({
    type: 'event.ack',
    status,
    from_agent: by,
    to_agent: target.from_agent,
    correlation_id: target.correlation_id,
    metadata: { ack_of: target.id },
  });
}

function patchReady(by = WORKER, artifactIds = ['art_20260131T120000_00000000000a']): LogEvent {
  return logEvent({
    type: 'patch.ready',
    status: 'ready',
    room: 'patches',
    from_agent: by,
    to_agent: REQUESTER,
    correlation_id: CORR,
    artifact_ids: artifactIds,
  });
}

function reply(status: LogEvent['status'], by = WORKER): LogEvent {
  return logEvent({ type: 'task.reply', status, from_agent: by, to_agent: REQUESTER, correlation_id: CORR });
}

describe('statusCarried', () => {
  it('gives the status each event kind moves a task to', () => {
    expect(statusCarried({ type: 'task.request', status: null })).toBe('open');
    expect(statusCarried({ type: 'task.request', status: 'open' })).toBe('open');
    expect(statusCarried({ type: 'patch.ready', status: null })).toBe('ready');
    expect(statusCarried({ type: 'event.ack', status: 'claimed' })).toBe('claimed');
    expect(statusCarried({ type: 'event.ack', status: 'applied' })).toBe('applied');
    expect(statusCarried({ type: 'task.reply', status: 'blocked' })).toBe('blocked');
    expect(statusCarried({ type: 'task.reply', status: 'failed' })).toBe('failed');
  });

  it('does not move a task for plain acks, replies without status, or status notes', () => {
    expect(statusCarried({ type: 'event.ack', status: null })).toBeNull();
    expect(statusCarried({ type: 'task.reply', status: null })).toBeNull();
    expect(statusCarried({ type: 'status', status: null })).toBeNull();
    expect(statusCarried({ type: 'status', status: 'claimed' })).toBeNull();
    expect(statusCarried({ type: 'note', status: 'open' })).toBeNull();
  });

  it('treats superseded on any event kind as superseded', () => {
    for (const type of ['status', 'task.request', 'patch.ready', 'event.ack', 'note'])
      expect(statusCarried({ type, status: 'superseded' })).toBe('superseded');
  });
});

describe('isTerminal', () => {
  it('is true only for applied, failed, blocked and superseded', () => {
    expect(isTerminal('applied')).toBe(true);
    expect(isTerminal('failed')).toBe(true);
    expect(isTerminal('blocked')).toBe(true);
    expect(isTerminal('superseded')).toBe(true);
    expect(isTerminal('open')).toBe(false);
    expect(isTerminal('claimed')).toBe(false);
    expect(isTerminal('ready')).toBe(false);
    expect(isTerminal(null)).toBe(false);
  });
});

describe('projectTask', () => {
  it('follows the happy path open → claimed → ready → applied', () => {
    const req = request();
    const claim = ack(req, WORKER, 'claimed');
    const patch = patchReady();
    const applied = ack(patch, REQUESTER, 'applied');
    const state = projectTask(CORR, [req, claim, patch, applied]);

    expect(state.correlation_id).toBe(CORR);
    expect(state.status).toBe('applied');
    expect(state.done).toBe(true);
    expect(state.request_event_id).toBe(req.id);
    expect(state.requester).toBe(REQUESTER);
    expect(state.worker).toBe(WORKER);
    expect(state.artifact_ids).toEqual(patch.artifact_ids);
    expect(state.event_count).toBe(4);
    expect(state.created_at).toBe(req.created_at);
    expect(state.last_event_at).toBe(applied.created_at);
    expect(state.last_event_id).toBe(applied.id);
    expect(state.history.map((h) => [h.from, h.to, h.expected])).toEqual([
      [null, 'open', true],
      ['open', 'claimed', true],
      ['claimed', 'ready', true],
      ['ready', 'applied', true],
    ]);
    expect(state.history.map((h) => h.event_id)).toEqual([req.id, claim.id, patch.id, applied.id]);
    expect(state.history.map((h) => h.event_type)).toEqual([
      'task.request',
      'event.ack',
      'patch.ready',
      'event.ack',
    ]);
    expect(state.history.map((h) => h.by)).toEqual([REQUESTER, WORKER, WORKER, REQUESTER]);
    expect(state.history[3]?.at).toBe(applied.created_at);
  });

  it('reports each intermediate status and is not done before a terminal one', () => {
    const req = request();
    const claim = ack(req, WORKER, 'claimed');
    const patch = patchReady();
    expect(projectTask(CORR, [req])).toMatchObject({ status: 'open', done: false });
    expect(projectTask(CORR, [req, claim])).toMatchObject({ status: 'claimed', done: false });
    expect(projectTask(CORR, [req, claim, patch])).toMatchObject({ status: 'ready', done: false });
  });

  it.each(['blocked', 'failed'] as const)(
    'ends in %s when the worker replies so after claiming',
    (status) => {
      const req = request();
      const state = projectTask(CORR, [req, ack(req, WORKER, 'claimed'), reply(status)]);
      expect(state.status).toBe(status);
      expect(state.done).toBe(true);
      expect(state.history.at(-1)).toMatchObject({
        from: 'claimed',
        to: status,
        event_type: 'task.reply',
        expected: true,
      });
    },
  );

  it.each(['blocked', 'failed'] as const)('allows a %s reply straight from open', (status) => {
    const state = projectTask(CORR, [request(), reply(status)]);
    expect(state.status).toBe(status);
    expect(state.history.at(-1)).toMatchObject({ from: 'open', to: status, expected: true });
  });

  it('ends in failed when the requester acks failed after ready', () => {
    const req = request();
    const patch = patchReady();
    const state = projectTask(CORR, [
      req,
      ack(req, WORKER, 'claimed'),
      patch,
      ack(patch, REQUESTER, 'failed'),
    ]);
    expect(state.status).toBe('failed');
    expect(state.done).toBe(true);
    expect(state.history.at(-1)).toMatchObject({
      from: 'ready',
      to: 'failed',
      event_type: 'event.ack',
      by: REQUESTER,
      expected: true,
    });
  });

  it('ends in superseded from any status, always as an expected move', () => {
    for (const prefix of [[request()], [request(), reply('blocked')], [request(), patchReady()]]) {
      const correction = logEvent({
        type: 'status',
        status: 'superseded',
        correlation_id: CORR,
        from_agent: REQUESTER,
      });
      const state = projectTask(CORR, [...prefix, correction]);
      expect(state.status).toBe('superseded');
      expect(state.done).toBe(true);
      expect(state.history.at(-1)).toMatchObject({
        to: 'superseded',
        expected: true,
        event_id: correction.id,
      });
    }
  });

  it('flags moves the state table does not show as expected: false, but still applies them', () => {
    const req = request();
    const patch = patchReady();
    // ready straight from open (no claim), then applied, then a late claim after the terminal state.
    const lateClaim = ack(req, WORKER, 'claimed');
    const state = projectTask(CORR, [req, patch, ack(patch, REQUESTER, 'applied'), lateClaim]);
    expect(state.history.map((h) => [h.from, h.to, h.expected])).toEqual([
      [null, 'open', true],
      ['open', 'ready', false],
      ['ready', 'applied', true],
      ['applied', 'claimed', false],
    ]);
    expect(state.status).toBe('claimed');
    expect(state.done).toBe(false);
  });

  it.each([
    ['applied from claimed', ['claimed', 'applied']],
    ['blocked from ready', ['claimed', 'ready', 'blocked']],
    ['claimed twice', ['claimed', 'claimed']],
  ] as const)('flags %s as unexpected', (_name, moves) => {
    const req = request();
    const events: LogEvent[] = [req];
    for (const move of moves) {
      if (move === 'ready') events.push(patchReady());
      else if (move === 'blocked') events.push(reply('blocked'));
      else events.push(ack(req, move === 'applied' ? REQUESTER : WORKER, move));
    }
    const state = projectTask(CORR, events);
    expect(state.history.at(-1)?.expected).toBe(false);
    expect(state.history.slice(0, -1).every((h) => h.expected)).toBe(true);
  });

  it('flags a task whose first status is not open', () => {
    const state = projectTask(CORR, [reply('blocked')]);
    expect(state.history).toEqual([expect.objectContaining({ from: null, to: 'blocked', expected: false })]);
    expect(state.request_event_id).toBeNull();
    expect(state.requester).toBeNull();
  });

  it('ignores status-less events for transitions but counts them', () => {
    const req = request();
    const note = logEvent({
      type: 'status',
      to_agent: '*',
      correlation_id: CORR,
      from_agent: REQUESTER,
      body: 'watching',
    });
    const plainAck = ack(req, WORKER, null);
    const state = projectTask(CORR, [req, note, plainAck]);
    expect(state.status).toBe('open');
    expect(state.history).toHaveLength(1);
    expect(state.event_count).toBe(3);
    expect(state.last_event_id).toBe(plainAck.id);
  });

  describe('worker and requester', () => {
    it('take the requester from the first task.request and the worker from its to_agent', () => {
      const first = request();
      const second = request({ from_agent: 'someone-else', to_agent: 'another-worker' });
      const state = projectTask(CORR, [first, second]);
      expect(state.request_event_id).toBe(first.id);
      expect(state.requester).toBe(REQUESTER);
      expect(state.worker).toBe(WORKER);
    });

    it('leave the worker unknown for a broadcast request until someone claims it', () => {
      const req = request({ to_agent: '*' });
      expect(projectTask(CORR, [req]).worker).toBeNull();
      expect(projectTask(CORR, [req, ack(req, 'pi-gemini', 'claimed')]).worker).toBe('pi-gemini');
    });

    it('make the claimer the worker even when the request named someone else', () => {
      const req = request();
      expect(projectTask(CORR, [req, ack(req, 'pi-gemini', 'claimed')]).worker).toBe('pi-gemini');
    });

    it('take the patch author as worker when nobody was named or claimed', () => {
      const req = request({ to_agent: null });
      expect(projectTask(CORR, [req, patchReady('pi-gemini')]).worker).toBe('pi-gemini');
    });

    it('do not let a patch author replace a known worker', () => {
      const req = request();
      expect(projectTask(CORR, [req, ack(req, WORKER, 'claimed'), patchReady('pi-gemini')]).worker).toBe(
        WORKER,
      );
    });

    it('do not make the requester the worker when they ack applied', () => {
      const req = request({ to_agent: '*' });
      const patch = patchReady();
      expect(projectTask(CORR, [req, patch, ack(patch, REQUESTER, 'applied')]).worker).toBe(WORKER);
    });
  });

  it('collects artifact ids across events without duplicates, in first-seen order', () => {
    const state = projectTask(CORR, [
      request(),
      patchReady(WORKER, ['art_b', 'art_a']),
      patchReady(WORKER, ['art_a', 'art_c']),
    ]);
    expect(state.artifact_ids).toEqual(['art_b', 'art_a', 'art_c']);
  });

  it('projects an empty event list to an empty state', () => {
    expect(projectTask(CORR, [])).toEqual({
      correlation_id: CORR,
      status: null,
      request_event_id: null,
      requester: null,
      to_agent: null,
      worker: null,
      depends_on: [],
      claim_event_id: null,
      lease_expires_at: null,
      lease_expired: false,
      late_patch: false,
      reservations: [],
      artifact_ids: [],
      created_at: null,
      last_event_at: null,
      last_event_id: null,
      event_count: 0,
      done: false,
      history: [],
    });
  });
});

describe('projectTasks', () => {
  it('groups by correlation id in order of first appearance, keeping append order inside each task', () => {
    const reqA = logEvent({
      type: 'task.request',
      status: 'open',
      correlation_id: 'task_a',
      from_agent: 'r',
      to_agent: 'w',
    });
    const reqB = logEvent({
      type: 'task.request',
      status: 'open',
      correlation_id: 'task_b',
      from_agent: 'r',
      to_agent: 'v',
    });
    const claimA = logEvent({
      type: 'event.ack',
      status: 'claimed',
      correlation_id: 'task_a',
      from_agent: 'w',
    });
    const unrelated = logEvent({ type: 'status', correlation_id: null, body: 'hello' });
    const blockB = logEvent({
      type: 'task.reply',
      status: 'blocked',
      correlation_id: 'task_b',
      from_agent: 'v',
    });
    const patchA = logEvent({
      type: 'patch.ready',
      status: 'ready',
      correlation_id: 'task_a',
      from_agent: 'w',
    });

    const tasks = projectTasks([reqA, reqB, claimA, unrelated, blockB, patchA]);
    expect(tasks.map((t) => t.correlation_id)).toEqual(['task_a', 'task_b']);
    const [a, b] = tasks;
    expect(a).toMatchObject({ status: 'ready', worker: 'w', requester: 'r', event_count: 3, done: false });
    expect(a?.history.map((h) => h.to)).toEqual(['open', 'claimed', 'ready']);
    expect(b).toMatchObject({ status: 'blocked', worker: 'v', event_count: 2, done: true });
  });

  it('skips events without a correlation id and returns nothing for none', () => {
    expect(projectTasks([logEvent({ correlation_id: null }), logEvent({ correlation_id: '' })])).toEqual([]);
    expect(projectTasks([])).toEqual([]);
  });

  it('gives the same state as projectTask on each group', () => {
    const events = [
      logEvent({ type: 'task.request', correlation_id: 'task_x', to_agent: 'w' }),
      logEvent({ type: 'task.request', correlation_id: 'task_y', to_agent: 'w' }),
      logEvent({ type: 'event.ack', status: 'claimed', correlation_id: 'task_x', from_agent: 'w' }),
    ];
    const byId = new Map(projectTasks(events).map((t) => [t.correlation_id, t]));
    expect(byId.get('task_x')).toEqual(
      projectTask(
        'task_x',
        events.filter((e) => e.correlation_id === 'task_x'),
      ),
    );
    expect(byId.get('task_y')).toEqual(
      projectTask(
        'task_y',
        events.filter((e) => e.correlation_id === 'task_y'),
      ),
    );
  });
});
