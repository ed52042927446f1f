// `palace mcp` against a hub that answers 401: a loopback hub started with PALACE_MCP_HTTP_TOKEN
// writes no token file, so a proxy launched without that variable is refused. The client must get a
// JSON-RPC error for its initialize saying which token to set, never the hub's bare error body.

import { existsSync } from 'node:fs';

import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { killChildren, makeHubDirs, resultJson, startChildHub, type HubDirs } from '../helpers/hub.js';
import { closeSessions, stdioSession } from '../helpers/stdio-client.js';
import { tokenPath } from '../../hub/src/registration.js';

const TOKEN = 'hub-secret-4f1c9a7e2b';

let dirs: HubDirs;

beforeEach(() => {
  dirs = makeHubDirs();
});

afterEach(async () => {
  await closeSessions();
  await killChildren();
  dirs.cleanup();
});

async function initializeError(env: Record<string, string>): Promise<{ error: McpError; protocolErrors: Error[]; stderr: string }> {
  const session = stdioSession(dirs, env);
  const protocolErrors: Error[] = [];
  session.client.onerror = (err) => protocolErrors.push(err);
  const error = await session.connect(8_000).then(
    () => {
      throw new Error('initialize succeeded against a hub that requires a token');
    },
    (err: unknown) => err,
  );
  if (!(error instanceof McpError)) throw new Error(`expected a JSON-RPC error answer, got: ${String(error)}`);
  return { error, protocolErrors, stderr: session.stderr() };
}

describe('palace mcp (stdio) against a hub that answers 401', () => {
  it('answers initialize with a JSON-RPC error naming the token to set, and never leaks the token', async () => {
    const hub = await startChildHub(dirs, { env: { PALACE_MCP_HTTP_TOKEN: TOKEN } });
    expect(existsSync(tokenPath(dirs.palaceHome, dirs.palace))).toBe(false);

    const { error, protocolErrors, stderr } = await initializeError({});
    expect(error.message).toContain('PALACE_MCP_HTTP_TOKEN');
    expect(error.message).toContain(hub.url);
    expect(error.data).toMatchObject({ code: 'auth.unauthorized', http_status: 401, hub: hub.url });
    // Every stdout line was a JSON-RPC frame the SDK accepted.
    expect(protocolErrors).toEqual([]);
    expect(`${error.message} ${JSON.stringify(error.data)} ${stderr}`).not.toContain(TOKEN);

    // A wrong token is named as such, and is not echoed either.
    const wrong = await initializeError({ PALACE_MCP_HTTP_TOKEN: 'not-the-token-77' });
    expect(wrong.error.message).toMatch(/refused the token in PALACE_MCP_HTTP_TOKEN/);
    expect(wrong.error.data).toMatchObject({ code: 'auth.unauthorized', http_status: 401 });
    expect(JSON.stringify([wrong.error.message, wrong.error.data, wrong.stderr])).not.toMatch(/not-the-token-77|hub-secret/);

    // With the hub's token the same proxy is served by the hub.
    const good = stdioSession(dirs, { PALACE_MCP_HTTP_TOKEN: TOKEN });
    await good.connect(8_000);
    const status = resultJson<{ role: string }>(await good.client.callTool({ name: 'palace_status', arguments: {} }));
    expect(status.role).toBe('hub');
  });

  it('answers a tools/call refused with 401 after the hub changed its token, for the right id', async () => {
    const first = await startChildHub(dirs);
    const session = stdioSession(dirs);
    await session.connect(8_000);
    expect(resultJson<{ role: string }>(await session.client.callTool({ name: 'palace_status', arguments: {} })).role).toBe('hub');
    expect((await first.stop()).code).toBe(0);

    await startChildHub(dirs, { env: { PALACE_MCP_HTTP_TOKEN: TOKEN } });
    const failed = await session.client.callTool({ name: 'palace_status', arguments: {} }, undefined, { timeout: 8_000 }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failed).toBeInstanceOf(McpError);
    expect((failed as McpError).message).toContain('PALACE_MCP_HTTP_TOKEN');
    expect((failed as McpError).data).toMatchObject({ code: 'auth.unauthorized', http_status: 401 });
  });
});
