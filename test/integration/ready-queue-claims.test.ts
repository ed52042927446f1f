// The head of the ready queue on a real log: the caller's own live claims come first (resume: true),
// oldest first, filtered by stream and cut by limit, then the open tasks addressed to it or to '*'.
// The claims are read as plain rows (claimedBy), not through a counted task page (issue 30).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { Logstream } from '../../hub/src/logstream/logstream.js';
import { makeTmpDir, type TmpDir } from '../helpers/tmp-dir.js';

describe('ready queue: own claims first', () => {
  let dir: TmpDir;
  let ls: Logstream;

  const request = (id: string, stream: string, to: string): string =>
    ls.appendNow({ type: 'task.request', stream, room: 'r', from_agent: 'lead', to_agent: to, correlation_id: id, body: `do ${id}` }).id;

  beforeAll(() => {
    dir = makeTmpDir('palace-ready-claims-');
    ls = Logstream.open(dir.path);
    const t1 = request('task-1', 's1', 'agent-a');
    const t2 = request('task-2', 's1', 'agent-b');
    const t3 = request('task-3', 's2', '*');
    const t7 = request('task-7', 's1', 'agent-a');
    request('task-4', 's1', 'agent-a');
    request('task-5', 's2', 'agent-a');
    request('task-6', 's1', '*');
    request('task-8', 's1', 'agent-b');
    ls.ack({ event_id: t3, from_agent: 'agent-a', status: 'claimed' });
    ls.ack({ event_id: t1, from_agent: 'agent-a', status: 'claimed' });
    ls.ack({ event_id: t2, from_agent: 'agent-b', status: 'claimed' });
    // Claimed by agent-a, then patched: no longer a claim to resume.
    ls.ack({ event_id: t7, from_agent: 'agent-a', status: 'claimed' });
    ls.appendNow({ type: 'patch.ready', status: 'ready', stream: 's1', room: 'r', from_agent: 'agent-a', correlation_id: 'task-7', body: 'done' });
  });
  afterAll(() => {
    ls.close();
    dir.cleanup();
  });

  const queue = (raw: { stream?: string; limit?: number }): Array<[string, boolean]> =>
    ls.readyQueue({ agent: 'agent-a', ...raw }, null).tasks.map((t) => [t.correlation_id, t.resume === true]);

  it("lists the caller's claims (oldest task first) before its open tasks, never another worker's claim", () => {
    expect(queue({})).toEqual([
      ['task-1', true],
      ['task-3', true],
      ['task-4', false],
      ['task-5', false],
      ['task-6', false],
    ]);
  });

  it('keeps to one stream, claims included', () => {
    expect(queue({ stream: 's1' })).toEqual([
      ['task-1', true],
      ['task-4', false],
      ['task-6', false],
    ]);
    expect(queue({ stream: 's2' })).toEqual([
      ['task-3', true],
      ['task-5', false],
    ]);
  });

  it('stops at the limit, inside the claims or after them', () => {
    expect(queue({ limit: 1 })).toEqual([['task-1', true]]);
    expect(queue({ limit: 3 })).toEqual([
      ['task-1', true],
      ['task-3', true],
      ['task-4', false],
    ]);
  });

  it('gives another agent its own claim and its open tasks only', () => {
    expect(ls.readyQueue({ agent: 'agent-b' }, null).tasks.map((t) => [t.correlation_id, t.resume === true])).toEqual([
      ['task-2', true],
      ['task-6', false],
      ['task-8', false],
    ]);
  });
});
