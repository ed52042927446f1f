// The `palace logstream` commands as real child processes against real temporary palaces: the whole
// delegation protocol from the shell, exit codes, list filters, concurrent writers and cross-process wake-up.

import { createHash } from 'node:crypto';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { Logstream } from '../../hub/src/logstream/logstream.js';

import {
  appendEvent,
  makeTempPalace,
  parseJson,
  waitForLogOpen,
  type ErrorJson,
  type EventJson,
  type PageJson,
  type TempPalace,
} from '../helpers/cli.js';

interface TaskJson {
  correlation_id: string;
  status: string | null;
  done: boolean;
  requester: string | null;
  worker: string | null;
  request_event_id: string | null;
  artifact_ids: string[];
  history: Array<{ from: string | null; to: string; event_id: string; by: string; expected: boolean }>;
}

let palace: TempPalace;

beforeEach(() => {
  palace = makeTempPalace();
});

afterEach(async () => {
  await palace.cleanup();
});

async function allEvents(): Promise<EventJson[]> {
  const result = await palace.run(['logstream', 'list', '--limit', '500', '--json']);
  expect(result.code).toBe(0);
  return parseJson<PageJson>(result).events;
}

describe('delegation protocol from the CLI alone', () => {
  it('request → claim → patch artifact → patch.ready → verify hash → applied, visible in task and tasks', async () => {
    const requester = 'laptop-claude';
    const worker = 'desktop-codex';
    const corr = 'task_fix_parser_1a2b3c4d';
    const stream = 'project/palace';

    // Requester delegates.
    const request = await appendEvent(palace, {
      type: 'task.request',
      from: requester,
      to: worker,
      stream,
      room: 'delegation',
      correlationId: corr,
      status: 'open',
      body: 'Goal:\nFix the parser.\n\nDefinition of done:\nnpm test passes.',
      extra: ['--branch', 'fix/parser', '--base-commit', 'abc1234'],
    });
    expect(request.status).toBe('open');
    expect(request.id).toMatch(/^evt_\d{8}T\d{6}_[0-9a-f]{12}$/);

    // Worker's inbox long-poll sees it.
    const inbox = await palace.run([
      'logstream',
      'wait',
      '--to-agent',
      worker,
      '--timeout-ms',
      '20000',
      '--json',
    ]);
    expect(inbox.code).toBe(0);
    const inboxPage = parseJson<PageJson>(inbox);
    expect(inboxPage.timed_out).toBe(false);
    expect(inboxPage.events.map((e) => e.id)).toEqual([request.id]);
    expect(inboxPage.events[0]?.correlation_id).toBe(corr);

    // Worker claims it.
    const claim = await palace.run([
      'logstream',
      'ack',
      request.id,
      '--from-agent',
      worker,
      '--status',
      'claimed',
      '--json',
    ]);
    expect(claim.code).toBe(0);
    const claimEvent = parseJson<EventJson>(claim);
    expect(claimEvent).toMatchObject({
      type: 'event.ack',
      status: 'claimed',
      from_agent: worker,
      to_agent: requester,
      correlation_id: corr,
      stream,
    });
    expect(claimEvent.metadata.ack_of).toBe(request.id);

    // Worker stores the patch byte-exactly from stdin.
    const patch = Buffer.from(
      'diff --git a/src/parser.ts b/src/parser.ts\n--- a/src/parser.ts\n+++ b/src/parser.ts\n@@ -1 +1 @@\n-const x = 1;\n+const x = 2; // café ✓\n',
      'utf8',
    );
    const put = await palace.run(['artifact', 'put', '--kind', 'patch', '--created-by', worker, '--json'], {
      stdin: patch,
    });
    expect(put.code).toBe(0);
    expect(put.stderr).not.toContain('Warning:');
    const stored = parseJson<{ id: string; sha256: string; size_bytes: number; warnings?: string[] }>(put);
    expect(stored.id).toMatch(/^art_\d{8}T\d{6}_[0-9a-f]{12}$/);
    expect(stored.sha256).toBe(createHash('sha256').update(patch).digest('hex'));
    expect(stored.size_bytes).toBe(patch.length);
    expect(stored.warnings).toBeUndefined();

    // Worker announces it to the requester.
    const ready = await appendEvent(palace, {
      type: 'patch.ready',
      from: worker,
      to: requester,
      stream,
      room: 'patches',
      correlationId: corr,
      status: 'ready',
      body: 'Patch ready; run npm test.',
      extra: ['--artifact-id', stored.id],
    });
    expect(ready.artifact_ids).toEqual([stored.id]);

    // Requester's long-poll (resuming after its own request) sees the patch and the claim.
    const mine = await palace.run([
      'logstream',
      'wait',
      '--to-agent',
      requester,
      '--since-event-id',
      request.id,
      '--type',
      'patch.ready',
      '--timeout-ms',
      '20000',
      '--json',
    ]);
    expect(mine.code).toBe(0);
    const minePage = parseJson<PageJson>(mine);
    expect(minePage.events.map((e) => e.id)).toEqual([ready.id]);
    const artifactId = minePage.events[0]?.artifact_ids[0];
    expect(artifactId).toBe(stored.id);

    // Requester fetches the exact bytes and verifies the hash before acting.
    const fetched = await palace.run(['artifact', 'get', String(artifactId)]);
    expect(fetched.code).toBe(0);
    expect(fetched.stdoutBytes.equals(patch)).toBe(true);
    const meta = parseJson<{ sha256: string; size_bytes: number }>(
      await palace.run(['artifact', 'get', String(artifactId), '--json']),
    );
    expect(createHash('sha256').update(fetched.stdoutBytes).digest('hex')).toBe(meta.sha256);
    expect(meta.sha256).toBe(stored.sha256);

    // Requester applies and acknowledges.
    const applied = await palace.run([
      'logstream',
      'ack',
      ready.id,
      '--from-agent',
      requester,
      '--status',
      'applied',
      '--body',
      'applied; npm test green',
      '--json',
    ]);
    expect(applied.code).toBe(0);
    const appliedEvent = parseJson<EventJson>(applied);
    expect(appliedEvent).toMatchObject({
      type: 'event.ack',
      status: 'applied',
      to_agent: worker,
      correlation_id: corr,
    });

    // The task projection shows the whole history.
    const taskResult = await palace.run(['logstream', 'task', corr, '--json']);
    expect(taskResult.code).toBe(0);
    const task = parseJson<TaskJson>(taskResult);
    expect(task.status).toBe('applied');
    expect(task.done).toBe(true);
    expect(task.requester).toBe(requester);
    expect(task.worker).toBe(worker);
    expect(task.request_event_id).toBe(request.id);
    expect(task.artifact_ids).toEqual([stored.id]);
    expect(task.history.map((h) => h.to)).toEqual(['open', 'claimed', 'ready', 'applied']);
    expect(task.history.map((h) => h.from)).toEqual([null, 'open', 'claimed', 'ready']);
    expect(task.history.map((h) => h.event_id)).toEqual([
      request.id,
      claimEvent.id,
      ready.id,
      appliedEvent.id,
    ]);
    expect(task.history.every((h) => h.expected)).toBe(true);

    const tasksResult = await palace.run(['logstream', 'tasks', '--json']);
    expect(tasksResult.code).toBe(0);
    const tasks = parseJson<{ tasks: TaskJson[]; count: number }>(tasksResult);
    expect(tasks.count).toBe(1);
    expect(tasks.tasks[0]).toMatchObject({ correlation_id: corr, status: 'applied', done: true });

    // A finished task is not listed among open ones; the text view names it.
    const open = parseJson<{ tasks: TaskJson[]; count: number }>(
      await palace.run(['logstream', 'tasks', '--open', '--json']),
    );
    expect(open.count).toBe(0);
    const text = await palace.run(['logstream', 'task', corr]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`Task ${corr}: applied`);

    // The original request was never changed.
    const events = await allEvents();
    expect(events.find((e) => e.id === request.id)).toMatchObject({ status: 'open', type: 'task.request' });
    expect(events).toHaveLength(4);
  }, 120_000);

  it('tasks --stalled lists the claimed tasks with no event for 10 minutes', async () => {
    // An hour ago (by the writer's clock): two claims, one of them worked on since; now: a fresh claim.
    const hourAgo = new Date(Date.now() - 3_600_000);
    const old = Logstream.open(palace.dir, { now: () => hourAgo });
    const claim = (ls: Logstream, corr: string): void => {
      ls.appendNow({ type: 'task.request', status: 'open', stream: 's', room: 'r', from_agent: 'lead', to_agent: 'w', correlation_id: corr });
      ls.appendNow({ type: 'event.ack', status: 'claimed', stream: 's', room: 'r', from_agent: 'w', to_agent: 'lead', correlation_id: corr });
    };
    claim(old, 'task_quiet');
    claim(old, 'task_busy');
    old.close();
    const recent = Logstream.open(palace.dir);
    recent.appendNow({ type: 'status', stream: 's', room: 'r', from_agent: 'w', correlation_id: 'task_busy', body: 'still on it' });
    claim(recent, 'task_fresh');
    recent.close();

    const stalled = parseJson<{ tasks: TaskJson[]; count: number }>(await palace.run(['logstream', 'tasks', '--stalled', '--json']));
    expect(stalled.tasks.map((t) => t.correlation_id)).toEqual(['task_quiet']);
    const all = parseJson<{ tasks: TaskJson[]; count: number }>(await palace.run(['logstream', 'tasks', '--json']));
    expect(all.tasks.map((t) => [t.correlation_id, t.status])).toEqual([['task_quiet', 'claimed'], ['task_busy', 'claimed'], ['task_fresh', 'claimed']]);
  }, 60_000);

  it('an unknown correlation id is exit 1 with a JSON error', async () => {
    await appendEvent(palace, { type: 'status', from: 'a', body: 'x' });
    const result = await palace.run(['logstream', 'task', 'task_nope', '--json']);
    expect(result.code).toBe(1);
    expect(parseJson<ErrorJson>(result).error.code).toBe('log.event_not_found');
  }, 60_000);
});

describe('exit codes and validation', () => {
  it('wait timeout exits 2 with timed_out: true and no events', async () => {
    await appendEvent(palace, { type: 'status', from: 'a', to: 'b' });
    const result = await palace.run([
      'logstream',
      'wait',
      '--to-agent',
      'nobody-here',
      '--type',
      'task.request',
      '--timeout-ms',
      '300',
      '--json',
    ]);
    expect(result.code).toBe(2);
    const page = parseJson<PageJson>(result);
    expect(page.timed_out).toBe(true);
    expect(page.events).toEqual([]);
    expect(page.count).toBe(0);

    const text = await palace.run([
      'logstream',
      'wait',
      '--to-agent',
      'nobody-here',
      '--type',
      'task.request',
      '--timeout-ms',
      '100',
    ]);
    expect(text.code).toBe(2);
    expect(text.stdout).toContain('Timed out');
  }, 60_000);

  it('wait returns at once (exit 0) when matching events already exist', async () => {
    const e = await appendEvent(palace, { type: 'task.request', from: 'a', to: 'b' });
    const result = await palace.run([
      'logstream',
      'wait',
      '--to-agent',
      'b',
      '--timeout-ms',
      '20000',
      '--json',
    ]);
    expect(result.code).toBe(0);
    const page = parseJson<PageJson>(result);
    expect(page.timed_out).toBe(false);
    expect(page.events.map((x) => x.id)).toEqual([e.id]);
  }, 60_000);

  it("a bad --type 'BAD TYPE' exits 2 and appends nothing", async () => {
    await appendEvent(palace, { type: 'status', from: 'a' });
    const bad = await palace.run([
      'logstream',
      'append',
      '--type',
      'BAD TYPE',
      '--stream',
      's',
      '--room',
      'r',
      '--from-agent',
      'a',
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^Error: .*type/m);
    expect(bad.stdout).toBe('');

    const badJson = await palace.run([
      'logstream',
      'append',
      '--type',
      'BAD TYPE',
      '--stream',
      's',
      '--room',
      'r',
      '--from-agent',
      'a',
      '--json',
    ]);
    expect(badJson.code).toBe(2);
    const err = parseJson<ErrorJson>(badJson);
    expect(err.error.code).toBe('input.invalid');
    expect(err.error.field).toBe('type');
    expect(typeof err.error.message).toBe('string');

    expect(await allEvents()).toHaveLength(1);
  }, 60_000);

  it('an unknown option exits 2 and says so', async () => {
    const result = await palace.run(['logstream', 'list', '--no-such-flag']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("unknown option '--no-such-flag'");
    expect(result.stdout).toBe('');
  }, 60_000);

  it('an unknown --since-event-id exits 2 (list and wait)', async () => {
    await appendEvent(palace, { type: 'status', from: 'a' });
    const missing = 'evt_20200101T000000_000000000000';
    const list = await palace.run(['logstream', 'list', '--since-event-id', missing, '--json']);
    expect(list.code).toBe(2);
    expect(parseJson<ErrorJson>(list).error).toMatchObject({
      code: 'log.unknown_cursor',
      field: 'since_event_id',
    });

    const wait = await palace.run([
      'logstream',
      'wait',
      '--since-event-id',
      missing,
      '--timeout-ms',
      '20000',
    ]);
    expect(wait.code).toBe(2);
    expect(wait.stderr).toContain(missing);
  }, 60_000);

  it('a missing required flag exits 2 and appends nothing', async () => {
    await appendEvent(palace, { type: 'status', from: 'a' });
    const result = await palace.run([
      'logstream',
      'append',
      '--stream',
      's',
      '--room',
      'r',
      '--from-agent',
      'a',
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--type');
    const ack = await palace.run(['logstream', 'ack', 'evt_x']);
    expect(ack.code).toBe(2);
    expect(ack.stderr).toContain('--from-agent');
    expect(await allEvents()).toHaveLength(1);
  }, 60_000);

  it('--body and --body-file together exit 2 and append nothing', async () => {
    const result = await palace.run(
      [
        'logstream',
        'append',
        '--type',
        'status',
        '--stream',
        's',
        '--room',
        'r',
        '--from-agent',
        'a',
        '--body',
        'x',
        '--body-file',
        '-',
        '--json',
      ],
      { stdin: Buffer.from('y') },
    );
    expect(result.code).toBe(2);
    expect(parseJson<ErrorJson>(result).error.code).toBe('input.invalid');
    expect(await allEvents()).toHaveLength(0);
  }, 60_000);

  it('--body-file - reads stdin byte-exactly', async () => {
    const body = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from(
        '  leading spaces\r\nCRLF line\ttab\nünïcödé 日本語 🎉\n\n\ntrailing blank lines and no final newline  ',
        'utf8',
      ),
    ]);
    const result = await palace.run(
      [
        'logstream',
        'append',
        '--type',
        'task.reply',
        '--stream',
        's',
        '--room',
        'r',
        '--from-agent',
        'a',
        '--to-agent',
        'b',
        '--body-file',
        '-',
        '--json',
      ],
      { stdin: body },
    );
    expect(result.code).toBe(0);
    const event = parseJson<EventJson>(result);
    expect(Buffer.from(event.body, 'utf8').equals(body)).toBe(true);
    const [listed] = await allEvents();
    expect(Buffer.from(listed?.body ?? '', 'utf8').equals(body)).toBe(true);
  }, 60_000);

  it('invalid UTF-8 on --body-file - exits 2 naming stdin', async () => {
    const result = await palace.run(
      [
        'logstream',
        'append',
        '--type',
        'status',
        '--stream',
        's',
        '--room',
        'r',
        '--from-agent',
        'a',
        '--body-file',
        '-',
      ],
      { stdin: Buffer.from([0x61, 0xc3, 0x28, 0x62]) },
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('stdin');
    expect(await allEvents()).toHaveLength(0);
  }, 60_000);

  it('ack of an unknown event exits 1; a bad status exits 2; neither appends', async () => {
    const target = await appendEvent(palace, {
      type: 'task.request',
      from: 'a',
      to: 'b',
      correlationId: 'task_x',
    });
    const missing = await palace.run([
      'logstream',
      'ack',
      'evt_20200101T000000_000000000000',
      '--from-agent',
      'b',
      '--json',
    ]);
    expect(missing.code).toBe(1);
    expect(parseJson<ErrorJson>(missing).error.code).toBe('log.event_not_found');
    const badStatus = await palace.run([
      'logstream',
      'ack',
      target.id,
      '--from-agent',
      'b',
      '--status',
      'finished',
    ]);
    expect(badStatus.code).toBe(2);
    expect(badStatus.stderr).toMatch(/^Error: /m);
    const badAppendStatus = await palace.run([
      'logstream',
      'append',
      '--type',
      'status',
      '--stream',
      's',
      '--room',
      'r',
      '--from-agent',
      'a',
      '--status',
      'done',
    ]);
    expect(badAppendStatus.code).toBe(2);
    expect(await allEvents()).toHaveLength(1);
  }, 60_000);

  it('an unknown --artifact-id exits 2 and appends nothing', async () => {
    const result = await palace.run([
      'logstream',
      'append',
      '--type',
      'patch.ready',
      '--stream',
      's',
      '--room',
      'r',
      '--from-agent',
      'a',
      '--to-agent',
      'b',
      '--artifact-id',
      'art_20200101T000000_000000000000',
      '--json',
    ]);
    expect(result.code).toBe(2);
    expect(parseJson<ErrorJson>(result).error.code).toBe('artifact.unknown_ref');
    expect(await allEvents()).toHaveLength(0);
  }, 60_000);
});

describe('list filters through the CLI', () => {
  it('repeated --type is OR, --to-agent includes broadcasts, --since-event-id is strictly after, --preview truncates', async () => {
    const e1 = await appendEvent(palace, { type: 'status', from: 'alice', to: 'bob', body: 'one' });
    const e2 = await appendEvent(palace, {
      type: 'task.request',
      from: 'alice',
      to: 'bob',
      correlationId: 'task_a',
      body: 'two',
    });
    const e3 = await appendEvent(palace, {
      type: 'task.reply',
      from: 'bob',
      to: 'carol',
      correlationId: 'task_a',
      body: 'three',
    });
    const e4 = await appendEvent(palace, { type: 'status', from: 'carol', to: '*', body: 'x'.repeat(500) });
    const e5 = await appendEvent(palace, {
      type: 'patch.ready',
      from: 'carol',
      to: 'alice',
      body: '€'.repeat(300),
    });
    const e6 = await appendEvent(palace, { type: 'status', from: 'dave', body: 'no recipient' });

    const list = async (...args: string[]): Promise<EventJson[]> => {
      const result = await palace.run(['logstream', 'list', '--json', ...args]);
      expect(result.code, result.stderr).toBe(0);
      const page = parseJson<PageJson>(result);
      expect(page.count).toBe(page.events.length);
      return page.events;
    };
    const ids = (events: EventJson[]): string[] => events.map((e) => e.id);

    expect(ids(await list('--type', 'status', '--type', 'task.reply'))).toEqual([e1.id, e3.id, e4.id, e6.id]);
    expect(ids(await list('--type', 'patch.ready'))).toEqual([e5.id]);
    expect(ids(await list('--to-agent', 'bob'))).toEqual([e1.id, e2.id, e4.id]);
    expect(ids(await list('--to-agent', 'carol', '--type', 'task.reply'))).toEqual([e3.id]);
    expect(ids(await list('--from-agent', 'carol'))).toEqual([e4.id, e5.id]);
    expect(ids(await list('--since-event-id', e3.id))).toEqual([e4.id, e5.id, e6.id]);
    expect(ids(await list('--since-event-id', e6.id))).toEqual([]);
    expect(ids(await list('--since-event-id', e1.id, '--to-agent', 'bob'))).toEqual([e2.id, e4.id]);
    expect(ids(await list('--order', 'desc', '--limit', '2'))).toEqual([e6.id, e5.id]);

    const limited = parseJson<PageJson>(await palace.run(['logstream', 'list', '--limit', '2', '--json']));
    expect(ids(limited.events)).toEqual([e1.id, e2.id]);
    expect(limited.has_more).toBe(true);
    expect(limited.cursor).toBe(e2.id);

    const previews = await list('--preview');
    const byId = new Map(previews.map((e) => [e.id, e]));
    expect(byId.get(e4.id)).toMatchObject({ body: 'x'.repeat(200), body_truncated: true, body_length: 500 });
    expect(byId.get(e5.id)).toMatchObject({ body: '€'.repeat(200), body_truncated: true, body_length: 300 });
    expect(byId.get(e1.id)).toMatchObject({ body: 'one', body_truncated: false, body_length: 3 });
    const full = await list('--since-event-id', e3.id, '--limit', '1');
    expect(full[0]?.body).toBe('x'.repeat(500));
    expect(full[0]?.body_truncated).toBeUndefined();

    const text = await palace.run(['logstream', 'list', '--to-agent', 'bob']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^3 event\(s\):/);
    const none = await palace.run(['logstream', 'list', '--to-agent', 'nobody', '--type', 'task.request']);
    expect(none.stdout).toContain('No matching events.');
  }, 120_000);

  it('a bad filter value exits 2', async () => {
    await appendEvent(palace, { type: 'status', from: 'a' });
    for (const args of [
      ['--type', 'Not A Type'],
      ['--limit', '0'],
      ['--limit', 'many'],
      ['--status', 'nope'],
      ['--order', 'sideways'],
    ]) {
      const result = await palace.run(['logstream', 'list', '--json', ...args]);
      expect(result.code, args.join(' ')).toBe(2);
      expect(parseJson<ErrorJson>(result).error.code).toBe('input.invalid');
    }
  }, 60_000);
});

describe('several processes at once', () => {
  it('4 writer processes × 25 appends each: all 100 stored, unique ids, strictly increasing seqs', async () => {
    const writers = 4;
    const perWriter = 25;
    const lane = async (w: number): Promise<string[]> => {
      const ids: string[] = [];
      for (let i = 0; i < perWriter; i++) {
        const result = await palace.run(
          [
            'logstream',
            'append',
            '--type',
            'status',
            '--stream',
            'project/load',
            '--room',
            'r',
            '--from-agent',
            `writer-${w}`,
            '--body',
            `${w}:${i}`,
            '--json',
          ],
          { killAfterMs: 120_000 },
        );
        expect(result.code, `${result.stderr}${result.stdout}`).toBe(0);
        ids.push(parseJson<EventJson>(result).id);
      }
      return ids;
    };
    const lanes = await Promise.all(Array.from({ length: writers }, (_, w) => lane(w)));

    const events = await allEvents();
    expect(events).toHaveLength(writers * perWriter);
    expect(new Set(events.map((e) => e.id)).size).toBe(writers * perWriter);
    const seqs = events.map((e) => e.seq);
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBeGreaterThan(seqs[i - 1] ?? Infinity);
    expect(new Set(events.map((e) => e.body))).toEqual(
      new Set(
        Array.from(
          { length: writers * perWriter },
          (_, k) => `${Math.floor(k / perWriter)}:${k % perWriter}`,
        ),
      ),
    );
    // Each writer's own appends keep its order in the log.
    for (let w = 0; w < writers; w++) {
      const mine = events.filter((e) => e.from_agent === `writer-${w}`).map((e) => e.id);
      expect(mine).toEqual(lanes[w]);
    }
  }, 300_000);

  it('a wait in one process is woken by an append from another process', async () => {
    const before = await appendEvent(palace, { type: 'status', from: 'someone', to: '*' });
    const waiter = palace.start(
      [
        'logstream',
        'wait',
        '--to-agent',
        'worker-1',
        '--type',
        'task.request',
        '--since-event-id',
        before.id,
        '--timeout-ms',
        '20000',
        '--json',
      ],
      { killAfterMs: 60_000 },
    );
    await waitForLogOpen(palace.dir, waiter);
    expect(waiter.child.exitCode).toBeNull(); // nothing matches yet, so it is still waiting

    // Noise that does not match must not end the wait.
    await appendEvent(palace, { type: 'status', from: 'someone', to: 'worker-1' });
    const wake = await appendEvent(palace, {
      type: 'task.request',
      from: 'boss',
      to: 'worker-1',
      correlationId: 'task_wake',
      status: 'open',
    });

    const result = await waiter.done;
    expect(result.code, result.stderr).toBe(0);
    const page = parseJson<PageJson>(result);
    expect(page.timed_out).toBe(false);
    expect(page.events.map((e) => e.id)).toEqual([wake.id]);
  }, 120_000);
});
