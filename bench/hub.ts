// The `hub` benchmark suite: MCP append over HTTP, wake-up latency to a pending palace_event_wait
// and to 8 SSE clients, an unrelated request under 50 long-polls + 8 SSE clients, and cold start
// with idle RSS. The hub runs in this process (startHub, port 0, silent logger) beside a bare
// node:http reference server; cold start spawns real processes. Temp dirs are always removed.

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

import { loadConfig } from '../hub/src/config.js';
import { silentLogger } from '../hub/src/log.js';
import { startHub } from '../hub/src/server.js';
import { startBareHttp } from './bare-http.js';
import type { Figure, Suite, SuiteContext, SuiteResult } from './figure.js';
import { appendOverHttpFigures } from './hub-append.js';
import { connectSdkClient } from './hub-clients.js';
import { coldStartFailed, coldStartFigures } from './hub-cold-start.js';
import { hubListeners, type HubBench } from './hub-harness.js';
import { loadFigures } from './hub-load.js';
import { wakeOverHttpFigures } from './hub-wake.js';

async function run(ctx: SuiteContext): Promise<SuiteResult> {
  const root = mkdtempSync(join(tmpdir(), 'palace-bench-hub-'));
  const tempDir = (name: string): string => {
    const dir = join(root, name);
    mkdirSync(dir, { recursive: true });
    return dir;
  };
  const figures: Figure[] = [];
  const notes: string[] = [];
  const add = (part: { figures: Figure[]; notes: string[] }): void => {
    figures.push(...part.figures);
    notes.push(...part.notes);
  };
  try {
    const home = tempDir('home');
    const config = loadConfig(
      { palace: tempDir('palace') },
      { PALACE_HOME: home, PALACE_MCP_IDLE_HOURS: '0', PALACE_SSE_MAX_CLIENTS: '8' },
    );
    const hub = await startHub({ config, log: silentLogger, port: 0 });
    const clients: Client[] = [];
    let bench: HubBench | undefined;
    try {
      bench = {
        hub,
        bare: await startBareHttp(tempDir('bare')),
        ownListeners: hubListeners(hub.services.logstream) ?? 0,
      };
      const connect = async (name: string): Promise<Client> => {
        const client = await connectSdkClient(hub.url, name);
        clients.push(client);
        return client;
      };
      const appender = await connect('bench-appender');
      const waiter = await connect('bench-waiter');
      add(await appendOverHttpFigures(ctx, bench, appender));
      add(await wakeOverHttpFigures(ctx, bench, waiter, appender));
      add(await loadFigures(ctx, bench, appender));
    } finally {
      await Promise.all(clients.map((c) => c.close()));
      await bench?.bare.close();
      await hub.close();
    }
    // A hub that cannot start is a result (n/a, failing its targets), not a reason to drop the rest.
    add(
      await coldStartFigures(ctx, tempDir).catch((err: Error) => {
        ctx.progress(`cold start failed: ${err.message}`);
        return coldStartFailed(err);
      }),
    );
    notes.push(
      `Hub: startHub in this process on 127.0.0.1 port 0, no token, durability "${config.durability}", PALACE_SSE_MAX_CLIENTS 8;` +
        ' MCP is stateless Streamable HTTP (a fresh McpServer and transport per POST; replies as SSE).',
    );
    return { figures, notes };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

export const hubSuite: Suite = {
  name: 'hub',
  title: 'Hub over HTTP (hub/src/server.ts: MCP, long-poll, SSE, start-up)',
  run,
};
