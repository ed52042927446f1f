// `palace mcp`: a stdio MCP server that is a pass-through. On every JSON-RPC frame it looks for a
// live hub serving the same palace (the registration file) and forwards the frame to its /mcp;
// otherwise it answers from the same tool registry in-process. Stdout carries only protocol frames.

import { createInterface } from 'node:readline';

import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

import type { PalaceConfig } from '../hub/src/config.js';
import type { Logger } from '../hub/src/log.js';
import { canonicalPalace, dialUrl, readLiveRegistration, readStoredToken } from '../hub/src/registration.js';
import { createLocalServices } from '../hub/src/local-services.js';
import { buildServer } from '../hub/src/tools/build-server.js';
import { MUTATING_TOOLS } from '../hub/src/tools/registry.js';

const FORWARD_TIMEOUT_MS = 600_000;

interface Frame {
  id?: string | number | null;
  method?: string;
  params?: { name?: unknown; requestId?: unknown };
}

/** An in-process transport: frames in through deliver(), frames out through `write`. */
class LocalTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  constructor(private readonly write: (message: unknown) => void) {}
  async start(): Promise<void> {}
  async send(message: JSONRPCMessage): Promise<void> {
    this.write(message);
  }
  async close(): Promise<void> {
    this.onclose?.();
  }
  deliver(message: JSONRPCMessage): void {
    this.onmessage?.(message);
  }
}

/** Splits a text/event-stream body into its data payloads. */
export function sseData(text: string): string[] {
  const out: string[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    const data = block
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).replace(/^ /, ''));
    if (data.length > 0) out.push(data.join('\n'));
  }
  return out;
}

/** Whether a failed forward certainly never reached the hub (so answering locally cannot duplicate it). */
function neverReached(err: unknown): boolean {
  const code = (err as { cause?: { code?: string } }).cause?.code ?? (err as { code?: string }).code;
  return code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EHOSTUNREACH';
}

export interface StdioProxyOptions {
  config: Readonly<PalaceConfig>;
  log: Logger;
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
  fetchImpl?: typeof fetch;
}

export async function runStdioProxy(options: StdioProxyOptions): Promise<void> {
  const { config, log } = options;
  const output = options.output ?? process.stdout;
  const doFetch = options.fetchImpl ?? fetch;
  const palacePath = canonicalPalace(config.palacePath);
  const write = (message: unknown): void => {
    output.write(JSON.stringify(message) + '\n');
  };
  const inflight = new Map<string | number, AbortController>();
  let announced: string | undefined;

  let local: { transport: LocalTransport; close: () => Promise<void> } | undefined;
  const localServer = (): LocalTransport => {
    if (local) return local.transport;
    const { services, close } = createLocalServices(config, palacePath, log);
    const transport = new LocalTransport(write);
    void buildServer(services).connect(transport);
    local = { transport, close };
    return transport;
  };

  const forward = async (frame: Frame, text: string, base: string): Promise<void> => {
    const tokens = [readStoredToken(config.home, palacePath), config.httpToken].filter(
      (t, i, all): t is string => Boolean(t) && all.indexOf(t) === i,
    );
    const controller = new AbortController();
    if (frame.id !== undefined && frame.id !== null) inflight.set(frame.id, controller);
    const timer = setTimeout(() => controller.abort(), FORWARD_TIMEOUT_MS);
    try {
      let response: Response | undefined;
      for (const token of tokens.length > 0 ? tokens : [undefined]) {
        response = await doFetch(`${base}/mcp`, {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json',
            Accept: 'application/json, text/event-stream',
            ...(token ? { Authorization: `Bearer ${token}` } : {}),
          },
          body: text,
          signal: controller.signal,
        });
        if (response.status !== 401) break;
      }
      if (!response) throw new Error('no response');
      const body = await response.text();
      if (response.status === 202 || body.trim() === '') return;
      const type = response.headers.get('content-type') ?? '';
      const payloads = type.includes('text/event-stream') ? sseData(body) : [body];
      for (const payload of payloads) {
        const parsed: unknown = JSON.parse(payload);
        for (const message of Array.isArray(parsed) ? parsed : [parsed]) write(message);
      }
      if (!response.ok && payloads.length === 0) throw new Error(`hub answered HTTP ${response.status}`);
    } finally {
      clearTimeout(timer);
      if (frame.id !== undefined && frame.id !== null) inflight.delete(frame.id);
    }
  };

  const handle = async (text: string): Promise<void> => {
    let frame: Frame;
    try {
      frame = JSON.parse(text) as Frame;
    } catch {
      write({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
      return;
    }
    if (frame.method === 'notifications/cancelled' && frame.params?.requestId !== undefined)
      inflight.get(frame.params.requestId as string | number)?.abort();
    const hub = config.hubForward ? readLiveRegistration(config.home, palacePath) : undefined;
    if (hub && hub.pid !== process.pid) {
      const base = dialUrl(hub);
      if (announced !== base) {
        log.info(`live palace hub at ${base}; forwarding stdio requests to it`);
        announced = base;
      }
      try {
        await forward(frame, text, base);
        return;
      } catch (err) {
        const mutating = frame.method === 'tools/call' && typeof frame.params?.name === 'string' && MUTATING_TOOLS.has(frame.params.name);
        if (!neverReached(err) && (mutating || frame.method === undefined)) {
          if (frame.id !== undefined)
            write({
              jsonrpc: '2.0',
              id: frame.id,
              error: {
                code: -32000,
                message: `palace hub proxy failed: ${(err as Error).message}`,
                data: {
                  hub: base,
                  hint: 'The hub did not complete this request. Mutating calls are never replayed locally: the hub may still be running it. Check the hub, then retry.',
                },
              },
            });
          return;
        }
        log.warn(`hub at ${base} unreachable (${(err as Error).message}); answering locally`);
      }
    }
    localServer().deliver(frame as JSONRPCMessage);
  };

  const input = options.input ?? process.stdin;
  const lines = createInterface({ input, crlfDelay: Infinity });
  const pending = new Set<Promise<void>>();
  for await (const line of lines) {
    if (line.trim() === '') continue;
    const p = handle(line).catch((err: unknown) => log.error('stdio frame failed', { message: (err as Error).message }));
    pending.add(p);
    void p.finally(() => pending.delete(p));
  }
  await Promise.allSettled([...pending]);
  // Give the local server a moment to flush responses to frames delivered just before EOF.
  await new Promise((resolve) => setImmediate(resolve));
  await local?.close();
}
