// A CLI piped into a reader that stops early (`palace logstream tasks --open --json | head -c 200`)
// ends quietly with exit 0 instead of an unhandled EPIPE stack trace (issue 22).

import { spawn } from 'node:child_process';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { Logstream } from '../../hub/src/logstream/logstream.js';
import { PALACE_BIN, REPO_ROOT, makeTempPalace, type TempPalace } from '../helpers/cli.js';

let palace: TempPalace;

beforeAll(() => {
  palace = makeTempPalace('palace-pipe-');
  // Enough output to overflow a pipe's buffer (64 KiB), so the CLI is still writing when the reader goes.
  const log = Logstream.open(palace.dir);
  try {
    for (let i = 0; i < 400; i++)
      log.appendNow({
        type: 'task.request',
        stream: 'project/pipe',
        room: 'delegation',
        from_agent: 'agent-a',
        to_agent: 'agent-b',
        correlation_id: `task_pipe_${i}`,
        body: `task ${i} ${'x'.repeat(400)}`,
      });
  } finally {
    log.close();
  }
});
afterAll(() => palace.cleanup());

/** Runs the CLI with stdout read until `keepBytes` arrived, then closed; resolves with how it ended. */
function runIntoClosedPipe(
  args: readonly string[],
  keepBytes: number,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string; got: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [PALACE_BIN, '--palace', palace.dir, ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, HOME: palace.home, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let got = 0;
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdout.on('data', (c: Buffer) => {
      got += c.length;
      if (got >= keepBytes) child.stdout.destroy(); // what `head -c` does once it has enough
    });
    const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(killer);
      resolve({ code, signal, stderr, got });
    });
  });
}

describe('CLI output into a closed pipe', () => {
  it.each([
    [['logstream', 'tasks', '--open', '--json']],
    [['logstream', 'list', '--json', '--limit', '400']],
    [['logstream', 'list', '--limit', '400']],
  ])('palace %j | head -c 200 ends quietly with exit 0', async (args) => {
    const result = await runIntoClosedPipe(args, 200);
    expect(result.got).toBeGreaterThanOrEqual(200);
    expect(result.stderr).not.toMatch(/EPIPE|Unhandled|at .*\(node:/);
    expect(result.signal).toBeNull();
    expect(result.code).toBe(0);
  });
});
