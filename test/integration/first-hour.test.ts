// Issue 31, "the first hour", end to end: from a fresh HOME, `init` a folder outside the mining roots
// (it records the root), start the hub, mine through it (no restart), then paste the stdio
// configuration `palace serve` printed (Cursor's JSON: command + args) into the official MCP SDK stdio
// client, started from another directory with no `palace` on its PATH: tools/list, palace_search,
// palace_event_append. And a busy port names --port and PALACE_PORT.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';

import { PALACE_BIN, REPO_ROOT } from '../helpers/cli.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** This process's environment minus every PALACE_* setting (PALACE_MINE_ROOTS too), with HOME replaced. */
function freshEnv(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('PALACE_')) env[k] = v;
  return { ...env, HOME: home, USERPROFILE: home, NO_COLOR: '1', ...extra };
}

function palace(args: readonly string[], env: NodeJS.ProcessEnv): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [PALACE_BIN, ...args], { env, cwd: REPO_ROOT, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** `palace serve --port 0` until it has printed its client configuration. */
async function serve(env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; out: string; url: string }> {
  const child = spawn(process.execPath, [PALACE_BIN, 'serve', '--port', '0'], { env, cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  cleanups.push(
    () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null) return done();
        child.once('exit', () => done());
        child.kill('SIGTERM');
      }),
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  for (let i = 0; i < 300 && !out.includes('Liveness:'); i++) {
    if (child.exitCode !== null) throw new Error(`serve exited ${child.exitCode}: ${err}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const url = /listening: (http:\/\/\S+)/.exec(out)?.[1];
  if (!url) throw new Error(`serve printed no address: ${out}\n${err}`);
  return { child, out, url };
}

/** The JSON block printed under `# Cursor (~/.cursor/mcp.json)` in the stdio section. */
function cursorStdio(out: string): { command: string; args: string[]; env?: Record<string, string> } {
  const stdio = out.slice(out.indexOf('# Or over stdio'));
  const start = stdio.indexOf('# Cursor (~/.cursor/mcp.json)\n');
  expect(start, out).toBeGreaterThan(-1);
  const text = stdio.slice(start).split('\n').slice(1).join('\n');
  const json = text.slice(0, text.indexOf('\n}\n') + 2);
  return (JSON.parse(json) as { mcpServers: { palace: { command: string; args: string[] } } }).mcpServers.palace;
}

function textOf(result: unknown): string {
  const r = result as CallToolResult;
  const first = r.content[0];
  return first && first.type === 'text' ? first.text : '';
}

describe('the first hour (issue 31)', () => {
  it('init records the root, the live hub mines it, the printed stdio config works from elsewhere with no palace on PATH', async () => {
    const root = mkdtempSync(join(tmpdir(), 'palace-first-hour-'));
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    const home = join(root, 'home');
    mkdirSync(home);
    // Outside HOME, so outside the default mining roots (PALACE_MINE_ROOTS is not set).
    const project = join(root, 'work', 'billing');
    mkdirSync(join(project, 'src'), { recursive: true });
    writeFileSync(join(project, 'package.json'), '{"name":"billing"}\n');
    writeFileSync(join(project, 'src', 'invoice.ts'), 'export function roundInvoiceTotal(cents: number): number {\n  // invoices round half-up to whole cents\n  return Math.round(cents);\n}\n');
    writeFileSync(join(project, 'README.md'), '# billing\n\nThe billing service computes invoice totals and sends reminders.\n');
    const env = freshEnv(home);

    const hub = await serve(env);
    // Every stdio configuration it printed is absolute: node and bin/palace.js of this checkout.
    expect(hub.out).toContain(`claude mcp add palace -- ${process.execPath} ${PALACE_BIN} mcp --palace `);
    expect(hub.out).toContain(`command = ${JSON.stringify(process.execPath)}`);
    const config = cursorStdio(hub.out);
    expect(config.command).toBe(process.execPath);
    expect(config.args.slice(0, 2)).toEqual([PALACE_BIN, 'mcp']);

    // Before init, the live hub refuses the folder, and says how to allow it.
    const refused = palace(['mine', project], env);
    expect(refused.code, refused.stderr).toBe(2); // mine.path_refused: unusable input
    expect(refused.stderr).toContain('palace init <dir>');

    const init = palace(['init', join(root, 'work'), '--yes', '--json'], env);
    expect(init.code, init.stderr).toBe(0);
    const result = JSON.parse(init.stdout) as { mine_root_added: string; next: string[] };
    expect(result.mine_root_added).toBe(realpathSync(join(root, 'work')));
    expect(JSON.parse(readFileSync(join(home, '.palace', 'config.json'), 'utf8'))).toMatchObject({ mine_roots: [realpathSync(join(root, 'work'))] });
    const mineStep = result.next.find((n) => n.includes(' mine ') && n.endsWith(project));
    expect(mineStep, result.next.join('\n')).toBe(`palace mine ${project}`);

    // The same hub (no restart) now mines it.
    const mined = palace(['mine', project, '--json'], env);
    expect(mined.code, mined.stderr + mined.stdout).toBe(0);

    // Another directory, a PATH with no palace (and no node): only the printed command and arguments.
    const elsewhere = join(root, 'elsewhere');
    mkdirSync(elsewhere);
    const transport = new StdioClientTransport({
      command: config.command,
      args: config.args,
      cwd: elsewhere,
      env: { HOME: home, PATH: elsewhere },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'first-hour', version: '1.0.0' });
    cleanups.push(async () => {
      await client.close().catch(() => undefined);
    });
    await client.connect(transport, { timeout: 20_000 });
    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toEqual(expect.arrayContaining(['palace_search', 'palace_event_append']));

    const search = await client.callTool({ name: 'palace_search', arguments: { query: 'how are invoice totals rounded', limit: 5 } });
    expect(search.isError, textOf(search)).toBeFalsy();
    expect(textOf(search)).toContain('invoice.ts');

    const appended = await client.callTool({
      name: 'palace_event_append',
      arguments: { type: 'status', stream: 'project/billing', room: 'status', from_agent: 'laptop-cursor', body: 'connected through the printed stdio config' },
    });
    expect(appended.isError, textOf(appended)).toBeFalsy();
    const id = (JSON.parse(textOf(appended)) as { id: string }).id;
    // It reached the hub's log: the CLI (through the same hub) reads it back.
    const listed = palace(['logstream', 'list', '--from-agent', 'laptop-cursor', '--json'], env);
    expect((JSON.parse(listed.stdout) as { events: Array<{ id: string }> }).events.map((e) => e.id)).toEqual([id]);

    // A second hub on the same port: the error names both ways to pick another.
    const port = new URL(hub.url).port;
    const busy = palace(['--palace', join(root, 'other-palace'), 'serve'], { ...env, PALACE_PORT: port });
    expect(busy.code, busy.stderr).toBe(2); // hub.config
    expect(busy.stderr).toContain(`cannot listen on 127.0.0.1:${port}: the port is in use`);
    expect(busy.stderr).toContain('--port');
    expect(busy.stderr).toContain('PALACE_PORT');
  }, 120_000);
});
