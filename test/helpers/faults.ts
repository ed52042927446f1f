// Shared by the fault-injection tests: a plain-HTTP tool call (no SDK retries, so a refused write is
// seen exactly once) and whether this process may mount a tmpfs (root on Linux) to fill a disk for real.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ToolAnswer {
  ok: boolean;
  value: Record<string, unknown>;
}

/** One tools/call over plain HTTP, parsed from JSON or an SSE frame. */
export async function callOverHttp(url: string, name: string, args: Record<string, unknown>): Promise<ToolAnswer> {
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  const text = await res.text();
  const data = text.startsWith('{') ? text : (text.split('\n').find((l) => l.startsWith('data: ')) ?? '').slice(6);
  const message = JSON.parse(data) as { result: { content: Array<{ text: string }>; isError?: boolean } };
  return {
    ok: !message.result.isError,
    value: JSON.parse(message.result.content[0]?.text ?? 'null') as Record<string, unknown>,
  };
}

/** Whether a tmpfs can be mounted here (Linux, root): the disk-full tests skip without it. */
export function canMountTmpfs(): boolean {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return false;
  const dir = mkdtempSync(join(tmpdir(), 'palace-tmpfs-probe-'));
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir]).status === 0;
  if (mounted) spawnSync('umount', [dir]);
  rmdirSync(dir);
  return mounted;
}
