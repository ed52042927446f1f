// `palace logstream watch` as a real background process: who it wakes for, where it starts, how its
// cursor file survives runs (and corruption), --follow NDJSON, idle exit and Ctrl-C.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { Logstream } from '../../hub/src/logstream/logstream.js';
import {
  appendEvent,
  makeTempPalace,
  parseJson,
  parseNdjson,
  type EventJson,
  type PageJson,
  type TempPalace,
} from '../helpers/cli.js';

let palace: TempPalace;
const extra: TempPalace[] = [];

beforeEach(() => {
  palace = makeTempPalace();
});

afterEach(async () => {
  await palace.cleanup();
  for (const p of extra.splice(0)) await p.cleanup();
});

const ids = (events: readonly { id: string }[]): string[] => events.map((e) => e.id);

function readCursor(path: string): { cursor: string | null; agent?: string; updated_at: string } {
  return JSON.parse(readFileSync(path, 'utf8')) as {
    cursor: string | null;
    agent?: string;
    updated_at: string;
  };
}

describe('watch: who it wakes for', () => {
  it('--agent A skips A’s own broadcasts and events for others, and exits 0 on the first event addressed to A', async () => {
    await appendEvent(palace, { type: 'status', from: 'old', to: 'agent-a', body: 'before the watch' });
    const watcher = palace.start([
      'logstream',
      'watch',
      '--agent',
      'agent-a',
      '--state-file',
      '',
      '--json',
      '--idle-exit-ms',
      '30000',
    ]);
    await watcher.waitForStderr('Starting at the latest event');

    await appendEvent(palace, { type: 'status', from: 'agent-a', to: '*', body: 'my own broadcast' });
    await appendEvent(palace, { type: 'status', from: 'agent-b', to: 'agent-c', body: 'not for A' });
    await appendEvent(palace, { type: 'task.request', from: 'agent-a', to: 'agent-a', body: 'note to self' });
    const forA = await appendEvent(palace, {
      type: 'task.request',
      from: 'agent-b',
      to: 'agent-a',
      correlationId: 'task_1',
      status: 'open',
    });

    const result = await watcher.done;
    expect(result.code, result.stderr).toBe(0);
    const page = parseJson<PageJson>(result);
    expect(ids(page.events)).toEqual([forA.id]);
    expect(page.timed_out).toBe(false);
    expect(page.cursor).toBe(forA.id);
  }, 120_000);

  it('--agent A includes broadcasts from others and direct events, in one batch, in log order', async () => {
    const start = await appendEvent(palace, { type: 'status', from: 'x', body: 'anchor' });
    await appendEvent(palace, { type: 'status', from: 'agent-a', to: '*', body: 'own broadcast' });
    const broadcast = await appendEvent(palace, {
      type: 'status',
      from: 'agent-b',
      to: '*',
      body: 'hello all',
    });
    await appendEvent(palace, { type: 'status', from: 'agent-b', to: 'agent-c', body: 'for C' });
    const direct = await appendEvent(palace, {
      type: 'task.reply',
      from: 'agent-c',
      to: 'agent-a',
      body: 'for A',
    });

    const result = await palace.run([
      'logstream',
      'watch',
      '--agent',
      'agent-a',
      '--since-event-id',
      start.id,
      '--state-file',
      '',
      '--json',
      '--idle-exit-ms',
      '20000',
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(ids(parseJson<PageJson>(result).events)).toEqual([broadcast.id, direct.id]);

    // Repeated --type narrows to any of the given types.
    const typed = await palace.run([
      'logstream',
      'watch',
      '--agent',
      'agent-a',
      '--type',
      'task.reply',
      '--type',
      'patch.ready',
      '--since-event-id',
      start.id,
      '--state-file',
      '',
      '--json',
      '--idle-exit-ms',
      '20000',
    ]);
    expect(typed.code, typed.stderr).toBe(0);
    expect(ids(parseJson<PageJson>(typed).events)).toEqual([direct.id]);
  }, 120_000);

  it('exits 0 on a match in text mode, printing the event line', async () => {
    const start = await appendEvent(palace, { type: 'status', from: 'x' });
    const e = await appendEvent(palace, {
      type: 'task.request',
      from: 'agent-b',
      to: 'agent-a',
      body: 'do the thing',
    });
    const result = await palace.run([
      'logstream',
      'watch',
      '--agent',
      'agent-a',
      '--since-event-id',
      start.id,
      '--state-file',
      '',
      '--idle-exit-ms',
      '20000',
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^1 event\(s\):/);
    expect(result.stdout).toContain(e.id);
    expect(result.stdout).toContain('do the thing');
    expect(result.stderr).toContain(`Watching agent-a from ${start.id}`);
  }, 60_000);

  it('--idle-exit-ms 300 with nothing to see exits 2', async () => {
    await appendEvent(palace, { type: 'status', from: 'agent-b', to: 'agent-c' });
    const json = await palace.run([
      'logstream',
      'watch',
      '--agent',
      'agent-a',
      '--state-file',
      '',
      '--idle-exit-ms',
      '300',
      '--json',
    ]);
    expect(json.code).toBe(2);
    const page = parseJson<PageJson>(json);
    expect(page).toMatchObject({ events: [], count: 0, timed_out: true });

    const text = await palace.run([
      'logstream',
      'watch',
      '--agent',
      'agent-a',
      '--state-file',
      '',
      '--idle-exit-ms',
      '300',
    ]);
    expect(text.code).toBe(2);
    expect(text.stdout).toContain('Idle timeout');
  }, 60_000);

  it('bad watch arguments exit 2 and write no state file', async () => {
    const e = await appendEvent(palace, { type: 'status', from: 'x' });
    const stateFile = join(palace.root, 'state.json');
    for (const args of [
      ['--idle-exit-ms', '-5'],
      ['--idle-exit-ms', 'soon'],
      ['--poll-timeout-ms', '0'],
      ['--type', 'Bad Type'],
      ['--since-event-id', 'evt_20200101T000000_000000000000'],
    ]) {
      const result = await palace.run([
        'logstream',
        'watch',
        '--agent',
        'agent-a',
        '--state-file',
        stateFile,
        ...args,
      ]);
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(2);
      expect(existsSync(stateFile)).toBe(false);
    }
    expect(e.id).toBeTruthy();
  }, 60_000);
});

describe('watch: where it starts and its cursor file', () => {
  it('a first run without a cursor starts at the latest event, says so, and does not replay; --from-start replays', async () => {
    const old1 = await appendEvent(palace, {
      type: 'task.request',
      from: 'agent-b',
      to: 'agent-a',
      body: 'old 1',
    });
    const old2 = await appendEvent(palace, { type: 'status', from: 'agent-b', to: '*', body: 'old 2' });

    const fresh = await palace.run([
      'logstream',
      'watch',
      '--to-agent',
      'agent-a',
      '--idle-exit-ms',
      '1000',
      '--json',
    ]);
    expect(fresh.code).toBe(2);
    expect(fresh.stderr).toContain(`Starting at the latest event (${old2.id})`);
    expect(parseJson<PageJson>(fresh).events).toEqual([]);

    const replay = await palace.run([
      'logstream',
      'watch',
      '--to-agent',
      'agent-a',
      '--from-start',
      '--idle-exit-ms',
      '20000',
      '--json',
    ]);
    expect(replay.code, replay.stderr).toBe(0);
    expect(replay.stderr).not.toContain('Starting at the latest event');
    expect(ids(parseJson<PageJson>(replay).events)).toEqual([old1.id, old2.id]);
  }, 60_000);

  it('watch --agent X --from-start replays from the start every time, past its own state file', async () => {
    const old = await appendEvent(palace, { type: 'task.request', from: 'agent-b', to: 'agent-a', body: 'old' });
    const run = () => palace.run(['logstream', 'watch', '--agent', 'agent-a', '--from-start', '--idle-exit-ms', '20000', '--json']);
    const first = await run();
    expect(first.code, first.stderr).toBe(0);
    expect(ids(parseJson<PageJson>(first).events)).toEqual([old.id]);
    // The default state file now holds old.id; --from-start still replays it.
    const second = await run();
    expect(second.code, second.stderr).toBe(0);
    expect(ids(parseJson<PageJson>(second).events)).toEqual([old.id]);
    // Without --from-start the state file is used: nothing new, so it idles out.
    const resumed = await palace.run(['logstream', 'watch', '--agent', 'agent-a', '--idle-exit-ms', '1000', '--json']);
    expect(resumed.code).toBe(2);
  }, 60_000);

  it('--help names the state file, where it lives and how to reset it', async () => {
    const help = await palace.run(['logstream', 'watch', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('~/.palace/watch/<agent>.json');
    expect(help.stdout).toMatch(/reset/i);
    expect(help.stdout).toMatch(/--from-start[\s\S]*every (time|run)/);
  }, 30_000);

  it('--state-file keeps the cursor across runs: the second run sees only newer events', async () => {
    const stateFile = join(palace.root, 'cursors', 'agent-a.json');
    const old = await appendEvent(palace, {
      type: 'task.request',
      from: 'agent-b',
      to: 'agent-a',
      body: 'old',
    });

    const first = await palace.run([
      'logstream',
      'watch',
      '--agent',
      'agent-a',
      '--state-file',
      stateFile,
      '--from-start',
      '--idle-exit-ms',
      '20000',
      '--json',
    ]);
    expect(first.code, first.stderr).toBe(0);
    expect(ids(parseJson<PageJson>(first).events)).toEqual([old.id]);
    expect(readCursor(stateFile)).toMatchObject({ cursor: old.id, agent: 'agent-a' });

    const newer = await appendEvent(palace, {
      type: 'task.reply',
      from: 'agent-c',
      to: 'agent-a',
      body: 'new',
    });
    const second = await palace.run([
      'logstream',
      'watch',
      '--agent',
      'agent-a',
      '--state-file',
      stateFile,
      '--idle-exit-ms',
      '20000',
      '--json',
    ]);
    expect(second.code, second.stderr).toBe(0);
    expect(ids(parseJson<PageJson>(second).events)).toEqual([newer.id]);
    expect(readCursor(stateFile).cursor).toBe(newer.id);

    // Nothing new: the third run idles out instead of replaying.
    const third = await palace.run([
      'logstream',
      'watch',
      '--agent',
      'agent-a',
      '--state-file',
      stateFile,
      '--idle-exit-ms',
      '500',
      '--json',
    ]);
    expect(third.code).toBe(2);
    expect(parseJson<PageJson>(third).events).toEqual([]);
  }, 120_000);

  it('a first run checkpoints the tip, so events appended between runs are not missed', async () => {
    const stateFile = join(palace.root, 'state.json');
    const old = await appendEvent(palace, { type: 'task.request', from: 'agent-b', to: 'agent-a' });
    const first = await palace.run([
      'logstream',
      'watch',
      '--agent',
      'agent-a',
      '--state-file',
      stateFile,
      '--idle-exit-ms',
      '300',
      '--json',
    ]);
    expect(first.code).toBe(2);
    expect(readCursor(stateFile).cursor).toBe(old.id);

    const between = await appendEvent(palace, { type: 'task.request', from: 'agent-b', to: 'agent-a' });
    const second = await palace.run([
      'logstream',
      'watch',
      '--agent',
      'agent-a',
      '--state-file',
      stateFile,
      '--idle-exit-ms',
      '20000',
      '--json',
    ]);
    expect(second.code, second.stderr).toBe(0);
    expect(ids(parseJson<PageJson>(second).events)).toEqual([between.id]);
  }, 60_000);

  it('--agent without --state-file keeps its cursor under $HOME/.palace/watch/<sanitized agent>.json', async () => {
    const agent = 'box:claude/x_y';
    const e = await appendEvent(palace, { type: 'task.request', from: 'agent-b', to: agent });
    const result = await palace.run([
      'logstream',
      'watch',
      '--agent',
      agent,
      '--from-start',
      '--idle-exit-ms',
      '20000',
      '--json',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const path = join(palace.stateDir, 'watch', 'box_claude_x__y.json');
    expect(readCursor(path)).toMatchObject({ cursor: e.id, agent });
  }, 60_000);

  it('a corrupt state file replays from the start with a notice on stderr (never skips)', async () => {
    const stateFile = join(palace.root, 'state.json');
    const e1 = await appendEvent(palace, { type: 'task.request', from: 'agent-b', to: 'agent-a' });
    const e2 = await appendEvent(palace, { type: 'status', from: 'agent-c', to: 'agent-a' });
    for (const corrupt of ['{ this is not json', '[]', '{"cursor": 42}', '{"other": "key"}']) {
      writeFileSync(stateFile, corrupt);
      const result = await palace.run([
        'logstream',
        'watch',
        '--agent',
        'agent-a',
        '--state-file',
        stateFile,
        '--idle-exit-ms',
        '20000',
        '--json',
      ]);
      expect(result.code, `${corrupt}: ${result.stderr}`).toBe(0);
      expect(result.stderr).toMatch(/replaying from the start/);
      expect(result.stderr).toContain(stateFile);
      expect(ids(parseJson<PageJson>(result).events)).toEqual([e1.id, e2.id]);
      // The replayed batch was checkpointed, so the file is valid again.
      expect(readCursor(stateFile).cursor).toBe(e2.id);
    }
  }, 120_000);

  it('a state file with a null cursor resumes from the start of the log, without a corruption notice', async () => {
    const stateFile = join(palace.root, 'state.json');
    const e1 = await appendEvent(palace, { type: 'task.request', from: 'agent-b', to: 'agent-a' });
    writeFileSync(stateFile, JSON.stringify({ cursor: null, updated_at: '2026-01-01T00:00:00Z' }));
    const result = await palace.run([
      'logstream',
      'watch',
      '--agent',
      'agent-a',
      '--state-file',
      stateFile,
      '--idle-exit-ms',
      '20000',
      '--json',
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toMatch(/unreadable|replaying|Starting at the latest/);
    expect(ids(parseJson<PageJson>(result).events)).toEqual([e1.id]);
    expect(readCursor(stateFile).cursor).toBe(e1.id);
  }, 60_000);

  it('a stored cursor that no longer exists in this log replays from the start with a notice', async () => {
    const stateFile = join(palace.root, 'state.json');
    await appendEvent(palace, { type: 'status', from: 'x' });
    const gone = await appendEvent(palace, { type: 'task.request', from: 'agent-b', to: 'agent-a' });
    const first = await palace.run([
      'logstream',
      'watch',
      '--agent',
      'agent-a',
      '--state-file',
      stateFile,
      '--idle-exit-ms',
      '300',
      '--json',
    ]);
    expect(first.code).toBe(2);
    expect(readCursor(stateFile).cursor).toBe(gone.id);

    // A fresh palace (same HOME layout, new log) with the old state file.
    const other = makeTempPalace();
    extra.push(other);
    const n1 = await appendEvent(other, { type: 'task.request', from: 'agent-b', to: 'agent-a' });
    const n2 = await appendEvent(other, { type: 'status', from: 'agent-b', to: '*' });
    const result = await other.run([
      'logstream',
      'watch',
      '--agent',
      'agent-a',
      '--state-file',
      stateFile,
      '--idle-exit-ms',
      '20000',
      '--json',
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`Stored cursor ${gone.id} no longer exists`);
    expect(result.stderr).toMatch(/replaying from the start/);
    expect(ids(parseJson<PageJson>(result).events)).toEqual([n1.id, n2.id]);
    expect(readCursor(stateFile).cursor).toBe(n2.id);
  }, 120_000);
});

describe('watch: --follow, idle exit and Ctrl-C', () => {
  it('--follow --json prints NDJSON batches for events appended while it runs and exits 0 when idle after matching', async () => {
    await appendEvent(palace, {
      type: 'task.request',
      from: 'agent-b',
      to: 'agent-a',
      body: 'old, not replayed',
    });
    const watcher = palace.start([
      'logstream',
      'watch',
      '--agent',
      'agent-a',
      '--state-file',
      '',
      '--follow',
      '--json',
      '--idle-exit-ms',
      '1500',
    ]);
    await watcher.waitForStderr('Starting at the latest event');

    // Appends from this process go straight to the log file (a different process from the watcher),
    // so the next append follows the previous match within milliseconds, well inside the idle window.
    const appendDirect = (fields: { from: string; to: string; body: string }): EventJson => {
      const log = Logstream.open(palace.dir);
      try {
        return log.appendNow({
          type: 'status',
          stream: 'project/demo',
          room: 'status',
          from_agent: fields.from,
          to_agent: fields.to,
          body: fields.body,
        }) as EventJson;
      } finally {
        log.close();
      }
    };
    const e1 = appendDirect({ from: 'agent-b', to: 'agent-a', body: 'first' });
    await watcher.waitForStdout(e1.id);
    appendDirect({ from: 'agent-a', to: '*', body: 'own broadcast, skipped' });
    const e2 = appendDirect({ from: 'agent-c', to: '*', body: 'second' });
    await watcher.waitForStdout(e2.id);

    const result = await watcher.done;
    expect(result.code, result.stderr).toBe(0);
    const lines = parseNdjson<PageJson>(result.stdout);
    expect(result.stdout.trim().split('\n')).toHaveLength(lines.length); // one compact JSON value per line
    const batches = lines.filter((l) => l.events.length > 0);
    expect(batches.flatMap((b) => ids(b.events))).toEqual([e1.id, e2.id]);
    expect(batches.every((b) => b.timed_out === false)).toBe(true);
    expect(lines.at(-1)).toMatchObject({ events: [], count: 0, timed_out: true, cursor: e2.id });
  }, 120_000);

  it('--follow keeps running past the first match; a wait in another process wakes it', async () => {
    await appendEvent(palace, { type: 'status', from: 'x' });
    const watcher = palace.start([
      'logstream',
      'watch',
      '--agent',
      'agent-a',
      '--state-file',
      '',
      '--follow',
      '--json',
      '--idle-exit-ms',
      '60000',
    ]);
    await watcher.waitForStderr('Starting at the latest event');
    const e1 = await appendEvent(palace, { type: 'task.request', from: 'agent-b', to: 'agent-a' });
    await watcher.waitForStdout(e1.id);
    expect(watcher.child.exitCode).toBeNull();
    const e2 = await appendEvent(palace, { type: 'task.reply', from: 'agent-c', to: 'agent-a' });
    await watcher.waitForStdout(e2.id);
    expect(watcher.child.exitCode).toBeNull();

    watcher.child.kill('SIGINT');
    const result = await watcher.done;
    expect(result.code).toBe(130);
    expect(parseNdjson<PageJson>(result.stdout).flatMap((l) => ids(l.events))).toEqual([e1.id, e2.id]);
  }, 120_000);

  it('SIGINT stops a watch with exit 130 and "Stopped."', async () => {
    await appendEvent(palace, { type: 'status', from: 'x' });
    const watcher = palace.start(['logstream', 'watch', '--agent', 'agent-a', '--state-file', '']);
    await watcher.waitForStderr('Ctrl-C to stop');
    watcher.child.kill('SIGINT');
    const result = await watcher.done;
    expect(result.code).toBe(130);
    expect(result.stderr).toContain('Stopped.');
  }, 60_000);
});
