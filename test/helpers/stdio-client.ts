// A `palace mcp` child process driven by the official SDK client, for tests that need more than
// connectStdioClient: a bounded initialize (a proxy that never answers fails fast instead of after
// the SDK's 60 s default), the raw stdout lines the proxy wrote, and a tool call's error text.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

import { childEnv, PALACE_BIN, REPO_ROOT, type HubDirs } from './hub.js';

export interface StdioSession {
  client: Client;
  transport: StdioClientTransport;
  stderr(): string;
  /** Runs initialize; rejects with the SDK's error (an McpError for a JSON-RPC error answer). */
  connect(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

const sessions = new Set<StdioSession>();

/** Spawns `palace --palace P mcp` with the given extra environment; call connect() to initialize. */
export function stdioSession(dirs: HubDirs, env: Record<string, string> = {}): StdioSession {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [PALACE_BIN, '--palace', dirs.palace, 'mcp'],
    env: childEnv(dirs, env),
    cwd: REPO_ROOT,
    stderr: 'pipe',
  });
  const errs: Buffer[] = [];
  transport.stderr?.on('data', (c: Buffer) => errs.push(c));
  const client = new Client({ name: 'palace-stdio-test', version: '1.0.0' });
  const session: StdioSession = {
    client,
    transport,
    stderr: () => Buffer.concat(errs).toString('utf8'),
    connect: (timeoutMs = 10_000) => client.connect(transport, { timeout: timeoutMs }),
    async close() {
      sessions.delete(session);
      await client.close().catch(() => undefined);
      await transport.close().catch(() => undefined);
    },
  };
  sessions.add(session);
  return session;
}

/** Closes every session still open (afterEach). */
export async function closeSessions(): Promise<void> {
  await Promise.all([...sessions].map((s) => s.close()));
}

/** The {error: {code, message, data}} of an isError tool result; throws when the call succeeded. */
export function toolError(result: unknown): { code: string; message: string; data?: Record<string, unknown> } {
  const r = result as CallToolResult;
  const first = r.content[0];
  if (!r.isError || !first || first.type !== 'text') throw new Error(`expected an isError tool result, got ${JSON.stringify(result)}`);
  return (JSON.parse(first.text) as { error: { code: string; message: string; data?: Record<string, unknown> } }).error;
}
