// The typed HTTP client of a running hub, over an injected fetch: MCP tool calls as plain JSON-RPC
// POSTs (JSON or SSE replies, progress as it streams), JSON GETs and the raw event stream. Used by the
// dashboard (browser), the tray and the CLI (Node); imports nothing from either. Tool calls are the
// typed ToolClient (tool-client.ts) over the HTTP handler below.

import { createSseParser } from '../core/sse-frames.js';
import { createToolClient, HubClientError, type RpcHandler, type RpcNotification, type RpcReply, type ToolClient } from './tool-client.js';

export { HubClientError, parseToolResult, type ToolCallOptions } from './tool-client.js';

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

export interface HubClientOptions {
  baseUrl: string;
  token?: string | null | undefined;
  /** This agent's own secret (PALACE_AGENT_TOKEN), sent as X-Palace-Agent-Token: the hub binds writes to it. */
  agentToken?: string | null | undefined;
  fetch?: FetchLike;
}

export type StreamQuery = Record<string, string | readonly string[] | undefined>;

export interface HubClient extends ToolClient {
  readonly baseUrl: string;
  /** GET /healthz answered 200. */
  health(signal?: AbortSignal): Promise<boolean>;
  /** GET a JSON endpoint behind the token. */
  getJson<T>(path: string, signal?: AbortSignal): Promise<T>;
  /** MCP initialize with this client's name, so /statusz names it among the recent clients. */
  hello(name: string, version: string): Promise<void>;
  /** Opens GET /logstream/stream, resuming after `cursor` through Last-Event-ID. */
  openStream(query: StreamQuery, cursor: string | null, signal: AbortSignal): Promise<Response>;
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

async function errorFrom(res: Response): Promise<HubClientError> {
  let code = `http.${res.status}`;
  let message = `${res.status} ${res.statusText}`.trim();
  let field: string | undefined;
  try {
    const body = (await res.json()) as { error?: { code?: string; message?: string; field?: string } };
    if (body.error?.code) code = body.error.code;
    if (body.error?.message) message = body.error.message;
    field = body.error?.field;
  } catch {
    // not a JSON error body; keep the status line
  }
  return new HubClientError(code, message, res.status, field);
}

/**
 * The JSON-RPC reply with `id`, from a JSON body or from the data frames of an SSE body read as they
 * arrive (notifications, such as progress, go to `onNotification` on the way).
 */
async function replyFrom(res: Response, id: number, onNotification: ((n: RpcNotification) => void) | undefined): Promise<RpcReply> {
  const candidates: unknown[] = [];
  const take = (data: string): void => {
    const value = JSON.parse(data) as unknown;
    for (const c of [value].flat()) {
      const m = c as { id?: unknown; method?: string; params?: Record<string, unknown> };
      if (m && typeof m === 'object' && typeof m.method === 'string' && m.id === undefined) onNotification?.(m as RpcNotification);
      else candidates.push(c);
    }
  };
  if ((res.headers.get('content-type') ?? '').includes('text/event-stream') && res.body) {
    const parser = createSseParser();
    const decoder = new TextDecoder();
    const reader = res.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      for (const frame of parser.push(decoder.decode(value, { stream: true }))) if (frame.data !== undefined) take(frame.data);
    }
    for (const frame of parser.push(`${decoder.decode()}\n\n`)) if (frame.data !== undefined) take(frame.data);
  } else {
    take(await res.text());
  }
  for (const c of candidates) {
    const reply = c as RpcReply;
    if (reply && typeof reply === 'object' && reply.id === id) return reply;
  }
  throw new HubClientError('rpc.no_reply', 'the hub sent no reply for this request');
}

export function createHubClient(options: HubClientOptions): HubClient {
  const baseUrl = trimSlash(options.baseUrl);
  const doFetch: FetchLike = options.fetch ?? ((input, init) => fetch(input, init));
  const auth = (): Record<string, string> =>
    ({
      ...(options.token ? { Authorization: `Bearer ${options.token}` } : {}),
      ...(options.agentToken ? { 'X-Palace-Agent-Token': options.agentToken } : {}),
    });

  const request = async (path: string, init: RequestInit): Promise<Response> => {
    try {
      return await doFetch(`${baseUrl}${path}`, init);
    } catch (err) {
      if ((err as { name?: string }).name === 'AbortError') throw err;
      throw new HubClientError('hub.unreachable', `the hub at ${baseUrl} is not answering`);
    }
  };

  /** One JSON-RPC request as a POST to /mcp: the HTTP road of the tool client. */
  const handler: RpcHandler = async (body, { signal, onNotification }) => {
    const res = await request('/mcp', {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        ...auth(),
      },
      body: JSON.stringify(body),
      ...(signal ? { signal } : {}),
    });
    if (!res.ok) throw await errorFrom(res);
    return replyFrom(res, body.id, onNotification);
  };
  const tools = createToolClient(handler);

  return {
    ...tools,
    baseUrl,
    async health(signal) {
      try {
        const res = await request('/healthz', signal ? { signal } : {});
        return res.status === 200;
      } catch {
        return false;
      }
    },
    async getJson<T>(path: string, signal?: AbortSignal) {
      const res = await request(path, {
        headers: { Accept: 'application/json', ...auth() },
        ...(signal ? { signal } : {}),
      });
      if (!res.ok) throw await errorFrom(res);
      return (await res.json()) as T;
    },
    async hello(name, version) {
      await tools.rpc('initialize', {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name, version },
      });
    },
    openStream(query, cursor, signal) {
      const qs = new URLSearchParams();
      for (const [key, value] of Object.entries(query)) {
        if (value === undefined) continue;
        for (const v of typeof value === 'string' ? [value] : value) if (v !== '') qs.append(key, v);
      }
      const search = qs.toString();
      return request(`/logstream/stream${search ? `?${search}` : ''}`, {
        headers: { Accept: 'text/event-stream', ...auth(), ...(cursor ? { 'Last-Event-ID': cursor } : {}) },
        signal,
      });
    },
  };
}
