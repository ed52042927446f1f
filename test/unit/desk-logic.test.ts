// The desk's pure logic (renderer/src/lib/desk.ts): which new events notify the human, which
// reservations a task still holds, the agent-name and opt-in settings, and correlation ids from titles.

import { describe, expect, it } from 'vitest';

import {
  activeReservations,
  correlationFromTitle,
  DEFAULT_DESK_AGENT,
  deskNotices,
  type KeyValueStore,
  readDeskAgent,
  readNotifyOptIn,
  writeDeskAgent,
  writeNotifyOptIn,
} from '../../renderer/src/lib/desk.js';
import { logEvent } from '../helpers/fixtures.js';

function memoryStorage(): KeyValueStore & { size(): number } {
  const m = new Map<string, string>();
  return {
    getItem: (k) => m.get(k) ?? null,
    setItem: (k, v) => void m.set(k, v),
    removeItem: (k) => void m.delete(k),
    size: () => m.size,
  };
}

describe('deskNotices', () => {
  it('notifies a task addressed to the desk and a patch on a task it opened, nothing else', () => {
    const forMe = logEvent({
      type: 'task.request',
      from_agent: 'laptop-codex',
      to_agent: 'ana',
      correlation_id: 'task_a',
      body: '\nReview the copy\nmore',
    });
    const forOther = logEvent({
      type: 'task.request',
      from_agent: 'laptop-codex',
      to_agent: 'bob',
      correlation_id: 'task_b',
    });
    const broadcast = logEvent({
      type: 'task.request',
      from_agent: 'laptop-codex',
      to_agent: '*',
      correlation_id: 'task_c',
    });
    const patchMine = logEvent({
      type: 'patch.ready',
      from_agent: 'laptop-codex',
      to_agent: 'ana',
      correlation_id: 'task_mine',
    });
    const patchOther = logEvent({
      type: 'patch.ready',
      from_agent: 'laptop-codex',
      to_agent: 'bob',
      correlation_id: 'task_theirs',
    });
    const ownPatch = logEvent({ type: 'patch.ready', from_agent: 'ana', correlation_id: 'task_mine' });
    const notices = deskNotices(
      [forMe, forOther, broadcast, patchMine, patchOther, ownPatch],
      'ana',
      new Set(['task_mine']),
    );
    expect(notices.map((n) => n.event_id)).toEqual([forMe.id, patchMine.id]);
    expect(notices[0]).toMatchObject({
      title: 'Task for you from laptop-codex',
      body: 'task_a: Review the copy',
      correlation_id: 'task_a',
    });
    expect(notices[1]?.title).toBe('Patch ready on task_mine');
  });
});

describe('activeReservations', () => {
  const reserved = (body: Record<string, unknown>, correlation: string | null = 'task_x') =>
    logEvent({ type: 'file.reserved', correlation_id: correlation, body: JSON.stringify(body) });
  it("keeps the task's reservations that are neither released nor expired", () => {
    const now = Date.parse('2026-02-01T00:00:00Z');
    const live = reserved({ paths: ['src/**'], exclusive: true, expires_at: '2026-02-01T01:00:00Z' });
    const expired = reserved({ paths: ['old/'], exclusive: false, expires_at: '2026-01-31T23:00:00Z' });
    const released = reserved({ paths: ['gone/'], expires_at: '2026-02-01T01:00:00Z' });
    const other = reserved({ paths: ['x'], expires_at: '2026-02-01T01:00:00Z' }, 'task_y');
    const viaBody = reserved(
      { paths: ['docs/'], expires_at: '2026-02-01T01:00:00Z', correlation_id: 'task_x' },
      null,
    );
    const release = logEvent({
      type: 'file.released',
      body: JSON.stringify({ reservation_id: released.id }),
    });
    const active = activeReservations([live, expired, released, other, viaBody, release], 'task_x', now);
    expect(active.map((r) => r.event.id)).toEqual([live.id, viaBody.id]);
    expect(active[0]).toMatchObject({
      paths: ['src/**'],
      exclusive: true,
      expires_at: '2026-02-01T01:00:00Z',
    });
    expect(active[1]?.exclusive).toBe(false);
  });
});

describe('desk settings', () => {
  it('defaults to human, keeps another name, and forgets it when set back or blank', () => {
    const s = memoryStorage();
    expect(readDeskAgent(s)).toBe(DEFAULT_DESK_AGENT);
    expect(writeDeskAgent('  ana-desk ', s)).toBe('ana-desk');
    expect(readDeskAgent(s)).toBe('ana-desk');
    expect(writeDeskAgent('', s)).toBe(DEFAULT_DESK_AGENT);
    expect(s.size()).toBe(0);
    expect(readNotifyOptIn(s)).toBe(false);
    writeNotifyOptIn(true, s);
    expect(readNotifyOptIn(s)).toBe(true);
    writeNotifyOptIn(false, s);
    expect(s.size()).toBe(0);
  });

  it('derives a correlation id from a title', () => {
    expect(correlationFromTitle('Fix the login: redirect loop!')).toBe('task_fix_the_login_redirect_loop');
    expect(correlationFromTitle('   ')).toBe('');
    expect(correlationFromTitle('x'.repeat(60))).toBe(`task_${'x'.repeat(40)}`);
  });
});
