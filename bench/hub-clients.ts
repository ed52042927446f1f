// The clients the hub benchmark drives: the official MCP SDK client over Streamable HTTP, a
// hand-built JSON-RPC tools/call over fetch (no SDK), and a streaming SSE reader that stamps when
// each event id arrives. Loopback only; no measuring here beyond arrival stamps.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { LATEST_PROTOCOL_VERSION, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';

import type { AppendInput } from '../hub/src/logstream/logstream.js';

/** Tool arguments: the MCP schemas take absent optional fields, not nulls. */
export type ToolArgs = Record<string, unknown>;

export function toolArgs(input: AppendInput | Record<string, unknown>): ToolArgs {
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== null && v !== undefined));
}

/**
 * The SDK transport hands every request the same long-lived AbortSignal. undici adds an abort listener
 * to it per request, dropped only once that request is garbage-collected, and walks the signal's
 * listeners (getEventListeners) on each new request: a client making thousands of calls pays more
 * per call as it goes (past 1,500 listeners in one hub-suite run: MaxListenersExceededWarning; ~4% of
 * the process's CPU in a profile of 1,500 appends), all of it on the thread the in-process hub shares,
 * while each fetch of the bare reference gets a fresh signal. So a POST gets its own signal here (the
 * SDK reads its reply whole before the call resolves); the GET notification stream keeps the
 * transport's, so closing the client still ends it.
 */
const fetchOwnSignal: FetchLike = (url, init) => fetch(url, init?.method === 'POST' ? { ...init, signal: null } : init);

/** An SDK client connected to `<url>/mcp` (stateless hub: initialize once, then one POST per call). */
export async function connectSdkClient(url: string, name: string): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { fetch: fetchOwnSignal }));
  return client;
}

function firstText(result: CallToolResult): string {
  const first = result.content[0];
  if (!first || first.type !== 'text') throw new Error(`tool result without text: ${JSON.stringify(result)}`);
  return first.text;
}

/** Calls a tool through the SDK client and returns its parsed JSON; throws on an isError result. */
export async function sdkCall<T>(
  client: Client,
  name: string,
  args: ToolArgs,
  timeoutMs = 30_000,
): Promise<T> {
  const result = (await client.callTool({ name, arguments: args }, undefined, {
    timeout: timeoutMs,
  })) as CallToolResult;
  if (result.isError) throw new Error(`${name} failed: ${firstText(result)}`);
  return JSON.parse(firstText(result)) as T;
}

interface JsonRpcResponse {
  id?: unknown;
  result?: CallToolResult;
  error?: { message?: string };
}

/** The JSON-RPC response in a Streamable HTTP reply: a JSON body or the data of an SSE event. */
function parseRpcReply(contentType: string, text: string): JsonRpcResponse {
  if (!contentType.includes('text/event-stream')) return JSON.parse(text) as JsonRpcResponse;
  for (const block of text.split(/\r?\n\r?\n/)) {
    const data = block
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).replace(/^ /, ''))
      .join('\n');
    if (!data) continue;
    const message = JSON.parse(data) as JsonRpcResponse;
    if (message.result !== undefined || message.error !== undefined) return message;
  }
  throw new Error(`no JSON-RPC response in the SSE reply: ${text.slice(0, 200)}`);
}

/** POST /mcp with a hand-built tools/call (fetch, no SDK); returns the tool's parsed JSON. */
export class RawMcp {
  private nextId = 1;

  constructor(
    private readonly url: string,
    /** Extra headers on every call (an agent's X-Palace-Agent-Token). */
    private readonly headers: Record<string, string> = {},
  ) {}

  async call<T>(name: string, args: ToolArgs): Promise<T> {
    const id = this.nextId++;
    const res = await fetch(`${this.url}/mcp`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': LATEST_PROTOCOL_VERSION,
        ...this.headers,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }),
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`POST /mcp answered ${res.status}: ${text.slice(0, 200)}`);
    const reply = parseRpcReply(res.headers.get('content-type') ?? '', text);
    if (reply.error || !reply.result) throw new Error(`${name} failed: ${reply.error?.message ?? text}`);
    const result = reply.result;
    if (result.isError) throw new Error(`${name} failed: ${firstText(result)}`);
    return JSON.parse(firstText(result)) as T;
  }
}

/** POST of a JSON body to a bare server; returns the parsed JSON reply. */
export async function postJson<T>(url: string, body: unknown): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`POST ${url} answered ${res.status}: ${text.slice(0, 200)}`);
  return JSON.parse(text) as T;
}

/**
 * A streaming SSE reader (fetch): parses frames as chunks arrive and stamps, with performance.now()
 * taken when the chunk arrived, every event id found in a frame's `data:` (a palace_event_list
 * envelope `{events: [{id}]}` or a single `{id}`).
 */
export class SseClient {
  private buffer = '';
  private readonly arrivals = new Map<string, number>();
  private readonly waiters = new Map<string, Array<(at: number) => void>>();
  private readonly decoder = new TextDecoder();
  private connectedResolve: (() => void) | undefined;
  private readonly pump: Promise<void>;
  readonly connected: Promise<void>;

  private constructor(
    response: Response,
    private readonly controller: AbortController,
  ) {
    const body = response.body;
    if (!body) throw new Error('SSE response without a body');
    this.connected = new Promise((resolve) => (this.connectedResolve = resolve));
    const reader = body.getReader();
    this.pump = (async () => {
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          const at = performance.now();
          this.buffer += this.decoder.decode(value, { stream: true });
          this.parse(at);
        }
      } catch {
        // aborted by close()
      }
    })();
  }

  /**
   * Opens `<url><path>` as an event stream; resolves once the server's opening comment arrived.
   * Retries a 503 for a while: streams just closed by this process may not have been counted out yet.
   */
  static async open(url: string, path: string): Promise<SseClient> {
    const deadline = performance.now() + 5_000;
    for (;;) {
      const controller = new AbortController();
      const response = await fetch(`${url}${path}`, {
        headers: { Accept: 'text/event-stream' },
        signal: controller.signal,
      });
      if (response.status === 200) {
        const client = new SseClient(response, controller);
        await client.connected;
        return client;
      }
      controller.abort();
      if (response.status !== 503 || performance.now() > deadline)
        throw new Error(`GET ${path} answered ${response.status}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  private parse(at: number): void {
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) this.connectedResolve?.();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (data.length === 0) continue;
      const payload = JSON.parse(data.join('\n')) as { id?: string; events?: Array<{ id: string }> };
      const ids = payload.events ? payload.events.map((e) => e.id) : payload.id ? [payload.id] : [];
      for (const id of ids) {
        const waiting = this.waiters.get(id);
        if (!waiting) this.arrivals.set(id, at);
        for (const resolve of waiting ?? []) resolve(at);
        this.waiters.delete(id);
      }
    }
  }

  /** Resolves with the arrival stamp of event `id` (at once if it already arrived). */
  arrival(id: string, timeoutMs = 10_000): Promise<number> {
    const seen = this.arrivals.get(id);
    if (seen !== undefined) {
      this.arrivals.delete(id);
      return Promise.resolve(seen);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`SSE frame for ${id} not received in ${timeoutMs} ms`)),
        timeoutMs,
      );
      const list = this.waiters.get(id) ?? [];
      list.push((at) => {
        clearTimeout(timer);
        resolve(at);
      });
      this.waiters.set(id, list);
    });
  }

  async close(): Promise<void> {
    this.controller.abort();
    await this.pump;
  }
}
