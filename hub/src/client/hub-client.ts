// The typed HTTP client of a running hub, over an injected fetch: MCP tool calls as plain JSON-RPC
// POSTs (JSON or SSE replies, progress as it streams), JSON GETs and the raw event stream. Used by the
// dashboard (browser), the tray and the CLI (Node); imports nothing from either.

import { createSseParser } from '../core/sse-frames.js';

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

/** A failed hub call with a stable code: the hub's own error code, or `hub.unreachable`, `rpc.*`. */
export class HubClientError extends Error {
  override readonly name = 'HubClientError';
  readonly code: string;
  /** HTTP status, or null when no response arrived. */
  readonly status: number | null;
  readonly field: string | undefined;

  constructor(code: string, message: string, status: number | null = null, field?: string) {
    super(message);
    this.code = code;
    this.status = status;
    this.field = field;
  }
}

export interface HubClientOptions {
  baseUrl: string;
  token?: string | null | undefined;
  /** This agent's own secret (PALACE_AGENT_TOKEN), sent as X-Palace-Agent-Token: the hub binds writes to it. */
  agentToken?: string | null | undefined;
  fetch?: FetchLike;
}

export type StreamQuery = Record<string, string | readonly string[] | undefined>;

/** Options of one tool call beyond its arguments. */
export interface ToolCallOptions {
  signal?: AbortSignal;
  /** Progress of a long tool (a mine), asked for as MCP progress notifications and read as they stream in. */
  onProgress?: (progress: number, total: number | undefined, message: string | undefined) => void;
}

export interface HubClient {
  readonly baseUrl: string;
  /** GET /healthz answered 200. */
  health(signal?: AbortSignal): Promise<boolean>;
  /** GET a JSON endpoint behind the token. */
  getJson<T>(path: string, signal?: AbortSignal): Promise<T>;
  /** Calls an MCP tool and returns its parsed JSON result; tool errors throw HubClientError. */
  callTool<T>(name: string, args?: Record<string, unknown>, signal?: AbortSignal, options?: ToolCallOptions): Promise<T>;
  /** The names of the tools this hub serves (tools/list). */
  listTools(signal?: AbortSignal): Promise<string[]>;
  /** MCP initialize with this client's name, so /statusz names it among the recent clients. */
  hello(name: string, version: string): Promise<void>;
  /** Opens GET /logstream/stream, resuming after `cursor` through Last-Event-ID. */
  openStream(query: StreamQuery, cursor: string | null, signal: AbortSignal): Promise<Response>;
}

interface RpcReply {
  id?: unknown;
  result?: unknown;
  error?: { code?: number; message?: string; data?: { code?: string } };
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

type ProgressFn = NonNullable<ToolCallOptions['onProgress']>;

/**
 * The JSON-RPC reply with `id`, from a JSON body or from the data frames of an SSE body read as they
 * arrive (progress notifications go to `onProgress` on the way).
 */
async function replyFrom(res: Response, id: number, onProgress: ProgressFn | undefined): Promise<RpcReply> {
  const candidates: unknown[] = [];
  const take = (data: string): void => {
    const value = JSON.parse(data) as unknown;
    for (const c of [value].flat()) {
      const m = c as { method?: string; params?: { progress?: number; total?: number; message?: string } };
      if (m && typeof m === 'object' && m.method === 'notifications/progress') onProgress?.(m.params?.progress ?? 0, m.params?.total, m.params?.message);
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

/** A tools/call result as its JSON value; an isError result throws HubClientError with the tool's code. */
export function parseToolResult<T>(name: string, result: unknown): T {
  return toolResult<T>(name, result);
}

function toolResult<T>(name: string, result: unknown): T {
  const r = result as { content?: { type: string; text?: string }[]; isError?: boolean };
  const text = r.content?.find((c) => c.type === 'text')?.text;
  if (text === undefined) throw new HubClientError('rpc.bad_result', `${name} returned no text content`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    if (!r.isError) return text as T;
    // Arguments the tool's schema refused: the MCP server's text names the first bad field ("... at kind").
    if (text.startsWith('MCP error -32602')) throw new HubClientError('input.invalid', text, null, /\bat ([A-Za-z_][\w.]*)\s*(?:;|$)/.exec(text)?.[1]);
    throw new HubClientError('tool.failed', text);
  }
  if (r.isError) {
    const e = (value as { error?: { code?: string; message?: string; field?: string } }).error;
    throw new HubClientError(e?.code ?? 'tool.failed', e?.message ?? text, null, e?.field);
  }
  return value as T;
}

export function createHubClient(options: HubClientOptions): HubClient {
  const baseUrl = trimSlash(options.baseUrl);
  const doFetch: FetchLike = options.fetch ?? ((input, init) => fetch(input, init));
  const auth = (): Record<string, string> =>
    ({
      ...(options.token ? { Authorization: `Bearer ${options.token}` } : {}),
      ...(options.agentToken ? { 'X-Palace-Agent-Token': options.agentToken } : {}),
    });
  let nextId = 1;

  const request = async (path: string, init: RequestInit): Promise<Response> => {
    try {
      return await doFetch(`${baseUrl}${path}`, init);
    } catch (err) {
      if ((err as { name?: string }).name === 'AbortError') throw err;
      throw new HubClientError('hub.unreachable', `the hub at ${baseUrl} is not answering`);
    }
  };

  const rpc = async (
    method: string,
    params: Record<string, unknown>,
    signal?: AbortSignal,
    onProgress?: ProgressFn,
  ): Promise<unknown> => {
    const id = nextId++;
    const res = await request('/mcp', {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        ...auth(),
      },
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params: onProgress ? { ...params, _meta: { progressToken: id } } : params }),
      ...(signal ? { signal } : {}),
    });
    if (!res.ok) throw await errorFrom(res);
    const reply = await replyFrom(res, id, onProgress);
    if (reply.error)
      throw new HubClientError(
        reply.error.data?.code ?? 'rpc.error',
        reply.error.message ?? 'JSON-RPC error',
        res.status,
      );
    return reply.result;
  };

  return {
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
    async callTool<T>(name: string, args: Record<string, unknown> = {}, signal?: AbortSignal, options: ToolCallOptions = {}) {
      return toolResult<T>(name, await rpc('tools/call', { name, arguments: args }, signal ?? options.signal, options.onProgress));
    },
    async listTools(signal) {
      const result = (await rpc('tools/list', {}, signal)) as { tools?: { name: string }[] };
      return (result.tools ?? []).map((t) => t.name);
    },
    async hello(name, version) {
      await rpc('initialize', {
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
