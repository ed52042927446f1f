// The dashboard's pure logic: diff parsing, task rows (stalled and unclaimed), the bounded event
// window, filters, version-vector drift, the /sync/peers reader, command search and date labels.

import { describe, expect, it } from 'vitest';

import { parseUnifiedDiff, displayPath } from '../../renderer/src/lib/diff.js';
import { drift } from '../../renderer/src/lib/drift.js';
import { matchesFilters, NO_FILTERS } from '../../renderer/src/lib/event-filters.js';
import { formatBytes, formatDuration, formatWhen } from '../../renderer/src/lib/format.js';
import { searchCommands, type Command } from '../../renderer/src/lib/commands.js';
import { STALLED_AFTER_MS, taskRows, UNCLAIMED_AFTER_MS } from '../../renderer/src/lib/tasks.js';
import { mergeEvents } from '../../renderer/src/state/event-log.js';
import { normalizePeers } from '../../renderer/src/state/hub-types.js';
import { logEvent } from '../helpers/fixtures.js';

describe('parseUnifiedDiff', () => {
  it('numbers lines, counts changes, and reads header-like content inside a hunk as content', () => {
    const patch = [
      'diff --git a/notes.md b/notes.md',
      'index 1111111..2222222 100644',
      '--- a/notes.md',
      '+++ b/notes.md',
      '@@ -3,3 +3,3 @@ intro',
      ' keep',
      '--- a line that starts with dashes',
      '+++ a line that starts with pluses',
      ' tail',
      'diff --git a/new.txt b/new.txt',
      'new file mode 100644',
      '--- /dev/null',
      '+++ b/new.txt',
      '@@ -0,0 +1 @@',
      '+hello',
      '\\ No newline at end of file',
      '',
    ].join('\n');
    const files = parseUnifiedDiff(patch);
    expect(files.map(displayPath)).toEqual(['notes.md', 'new.txt']);
    const [notes, created] = files;
    expect(notes?.meta).toEqual(['index 1111111..2222222 100644']);
    expect(notes?.hunks[0]?.lines.map((l) => [l.kind, l.oldNo, l.newNo, l.text])).toEqual([
      ['ctx', 3, 3, 'keep'],
      ['del', 4, null, '-- a line that starts with dashes'],
      ['add', null, 4, '++ a line that starts with pluses'],
      ['ctx', 5, 5, 'tail'],
    ]);
    expect([notes?.added, notes?.removed]).toEqual([1, 1]);
    expect(created?.oldPath).toBeNull();
    expect(created?.hunks[0]?.lines.map((l) => l.kind)).toEqual(['add', 'note']);
  });

  it('returns no files for text that is not a diff', () => {
    expect(parseUnifiedDiff('')).toEqual([]);
  });
});

describe('taskRows', () => {
  const t0 = Date.parse('2026-01-31T12:00:00Z');
  const at = (ms: number): string => new Date(t0 + ms).toISOString().replace(/\.\d+Z$/, 'Z');

  it('marks a claimed task stalled after STALLED_AFTER_MS without events, and puts it first', () => {
    const events = [
      logEvent({
        type: 'task.request',
        correlation_id: 'task_a',
        from_agent: 'r',
        to_agent: 'w',
        status: 'open',
        created_at: at(0),
        body: 'Goal: A\nmore',
      }),
      logEvent({
        type: 'event.ack',
        correlation_id: 'task_a',
        from_agent: 'w',
        status: 'claimed',
        created_at: at(1_000),
      }),
      logEvent({
        type: 'task.request',
        correlation_id: 'task_b',
        from_agent: 'r',
        to_agent: 'w',
        status: 'open',
        created_at: at(2_000),
      }),
      logEvent({ type: 'status', correlation_id: 'task_note', created_at: at(3_000) }),
    ];
    const before = taskRows(events, t0 + 1_000 + STALLED_AFTER_MS - 1);
    expect(before.find((r) => r.correlation_id === 'task_a')).toMatchObject({
      status: 'claimed',
      stalled: false,
      worker: 'w',
      title: 'Goal: A',
    });
    const after = taskRows(events, t0 + 1_000 + STALLED_AFTER_MS);
    expect(after[0]).toMatchObject({ correlation_id: 'task_a', stalled: true, idleMs: STALLED_AFTER_MS });
    // A correlation id whose events never carry a task status is not a task.
    expect(after.map((r) => r.correlation_id)).not.toContain('task_note');
    expect(
      taskRows(events, t0 + 2_000 + UNCLAIMED_AFTER_MS).find((r) => r.correlation_id === 'task_b')?.unclaimed,
    ).toBe(true);
  });
});

describe('mergeEvents', () => {
  it('keeps append order, drops duplicates, prefers full bodies over previews, and stays bounded', () => {
    const a = logEvent({ body: 'x'.repeat(10) });
    const b = logEvent();
    const c = logEvent();
    const preview = { ...a, body: 'x', body_truncated: true, body_length: 10 };
    let window = mergeEvents([], [c, preview]);
    window = mergeEvents(window, [b, a, c]);
    expect(window.map((e) => e.id)).toEqual([a.id, b.id, c.id]);
    expect(window[0]?.body).toBe('x'.repeat(10));
    expect(mergeEvents(window, [{ ...a, body: 'y', body_truncated: true }])).toBe(window);
    expect(mergeEvents(window, [logEvent()], 2).map((e) => e.id)).toEqual([c.id, expect.any(String)]);
  });
});

describe('matchesFilters', () => {
  const e = logEvent({
    type: 'task.request',
    from_agent: 'laptop-claude',
    to_agent: 'laptop-codex',
    stream: 'project/web',
    room: 'delegation',
    status: 'open',
    correlation_id: 'task_login',
  });
  it('matches agents on either side, text filters anywhere, status exactly', () => {
    expect(matchesFilters(e, NO_FILTERS)).toBe(true);
    expect(matchesFilters(e, { ...NO_FILTERS, agent: 'CODEX' })).toBe(true);
    expect(matchesFilters(e, { ...NO_FILTERS, agent: 'cursor' })).toBe(false);
    expect(matchesFilters(e, { ...NO_FILTERS, stream: 'delegation' })).toBe(true);
    expect(matchesFilters(e, { ...NO_FILTERS, status: 'open', type: 'request', correlation: 'login' })).toBe(
      true,
    );
    expect(matchesFilters(e, { ...NO_FILTERS, status: 'claimed' })).toBe(false);
  });
});

describe('drift and the /sync/peers reader', () => {
  it('counts events behind and ahead per origin', () => {
    expect(drift({ a: 10, b: 5 }, { a: 12, b: 5, c: 3 })).toEqual({
      behind: 5,
      ahead: 0,
      origins: [
        { origin: 'a', local: 10, remote: 12 },
        { origin: 'c', local: 0, remote: 3 },
      ],
    });
    expect(drift({ a: 4 }, { a: 1 })).toMatchObject({ behind: 0, ahead: 3 });
    expect(drift({ a: 4 }, null)).toBeNull();
  });

  it('reads both field spellings and tolerates missing fields', () => {
    const p = normalizePeers({
      self: { replica_id: 'rep_1', name: 'box', version_vector: { rep_1: 3, rep_9: 2 } },
      peers: [
        {
          name: 'desk',
          url: 'http://desk:8765',
          reachable: null,
          in_flight: true,
          remote_version_vector: { rep_1: 3 },
        },
      ],
      gossip_origins: ['rep_9'],
      sync_interval_s: 15,
      sync_enabled: true,
    });
    expect(p.unnamed_origins).toEqual(['rep_9']);
    expect(p.peers[0]).toMatchObject({
      name: 'desk',
      reachable: null,
      in_flight: true,
      last_error: null,
      remote_version_vector: { rep_1: 3 },
    });
    expect(normalizePeers({ self: {}, peers: 'nope' })).toMatchObject({
      peers: [],
      unnamed_origins: [],
      sync_interval_s: null,
      self: { version_vector: {} },
    });
  });
});

describe('searchCommands and labels', () => {
  const cmd = (title: string, group: Command['group'] = 'Actions'): Command => ({
    id: title,
    title,
    group,
    run: () => undefined,
  });
  it('needs every word, and ranks a title that starts with the first word first', () => {
    const list = [
      cmd('Copy Codex config (http)', 'Copy'),
      cmd('Go to Tasks', 'Go to'),
      cmd('Show tasks help'),
      cmd('Copy the token', 'Copy'),
    ];
    expect(searchCommands(list, 'tasks').map((c) => c.title)).toEqual(['Go to Tasks', 'Show tasks help']);
    expect(searchCommands(list, 'copy codex').map((c) => c.title)).toEqual(['Copy Codex config (http)']);
    expect(searchCommands(list, '')).toHaveLength(4);
  });

  it('formats durations, sizes and calendar dates for people', () => {
    expect(formatDuration(2_000)).toBe('just now');
    expect(formatDuration(15 * 60_000)).toBe('15 min');
    expect(formatDuration(50 * 3_600_000)).toBe('2 d');
    expect(formatBytes(643)).toBe('643 B');
    expect(formatBytes(1_536)).toBe('1.5 KiB');
    expect(formatWhen('2026-03-02')).not.toMatch(/\d{2}:\d{2}/);
  });
});
