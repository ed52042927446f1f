// Fencing and addressing a reply or a patch read the task's stored state, not its whole history
// (issue 30: a long-lived task must not slow its writers). Real SQLite file; the reads are counted.

import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { Logstream } from '../../hub/src/logstream/logstream.js';
import { SqliteEventStore } from '../../hub/src/logstream/sqlite-event-store.js';
import { nextHex } from '../helpers/fixtures.js';
import { makeTmpDir, type TmpDir } from '../helpers/tmp-dir.js';

describe('fencing on a long task', () => {
  let dir: TmpDir;
  let ls: Logstream<SqliteEventStore>;
  let claimId: string;

  beforeEach(() => {
    dir = makeTmpDir('palace-fence-cost-');
    ls = new Logstream(new SqliteEventStore(join(dir.path, 'logstream.sqlite3'), { mintReplicaId: () => `rep_${nextHex()}` }));
    const request = ls.appendNow({ type: 'task.request', stream: 's', room: 'r', from_agent: 'lead', to_agent: 'w1', correlation_id: 'long', body: 'do it' });
    claimId = ls.ack({ event_id: request.id, from_agent: 'w1', status: 'claimed' }).id;
    for (let i = 0; i < 300; i++) ls.appendNow({ type: 'note', stream: 's', room: 'r', from_agent: 'w1', correlation_id: 'long', body: `step ${i}` });
  });
  afterEach(() => {
    ls.close();
    dir.cleanup();
  });

  it('stamps the live attempt without reading the task history', () => {
    const history = vi.spyOn(ls.store.tasks, 'eventsOf');
    const queries = vi.spyOn(ls.store, 'query');
    const patch = ls.submitPatch({ from_agent: 'w1', correlation_id: 'long', content: 'diff --git a/x b/x\n', body: 'done' });
    expect(patch.event.metadata.attempt).toBe(claimId);
    expect(patch.stale_attempt).toBeUndefined();
    expect(patch.event.to_agent).toBe('lead'); // the request's author, found from the stored task
    expect(history).not.toHaveBeenCalled();
    expect(queries).not.toHaveBeenCalled(); // no search of the task's 300 events for its request
  });

  it('flags a writer without the claim as stale, still without reading the history', () => {
    const history = vi.spyOn(ls.store.tasks, 'eventsOf');
    const queries = vi.spyOn(ls.store, 'query');
    const reply = ls.appendNow({ type: 'task.reply', stream: 's', room: 'r', from_agent: 'w2', correlation_id: 'long', status: 'failed', body: 'not mine' });
    expect(reply.metadata.stale_attempt).toMatchObject({ attempt: null });
    expect(reply.to_agent).toBe('lead');
    expect(history).not.toHaveBeenCalled();
    expect(queries).not.toHaveBeenCalled();
    expect(ls.task('long').status).toBe('claimed');
  });

  it('refuses a named attempt that is not the live claim', () => {
    expect(() => ls.appendNow({ type: 'task.reply', stream: 's', room: 'r', from_agent: 'w1', correlation_id: 'long', status: 'ready', attempt: 'evt_other', body: 'x' })).toThrow(
      expect.objectContaining({ code: 'task.stale_attempt' }),
    );
  });
});
