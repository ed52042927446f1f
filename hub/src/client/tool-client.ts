// The typed tool caller over any JSON-RPC handler: `call(name, args)` checked against the wire
// contract (mcp/contract.ts), the result parsed from the tools/call reply and tool errors thrown as
// HubClientError. The handler is the hub's /mcp over HTTP (hub-client.ts) or the MCP server in this
// process (mcp/server/in-process.ts). Browser-safe: imports only core/ and types.

import type { ArgsOf, ResultOf, ToolName } from '../mcp/contract.js';

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

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: number;
  method: string;
  params?: Record<string, unknown>;
}

/** A JSON-RPC reply as the client reads it. */
export interface RpcReply {
  id?: unknown;
  result?: unknown;
  error?: { code?: number; message?: string; data?: { code?: string } };
}

/** A notification that arrived while a request ran (progress, log messages). */
export interface RpcNotification {
  method: string;
  params?: Record<string, unknown>;
}

/**
 * Answers one JSON-RPC request with its reply; notifications sent on the way go to `onNotification`.
 * A transport failure rejects (HubClientError with a code); a JSON-RPC error is a reply with `error`.
 */
export type RpcHandler = (
  request: JsonRpcRequest,
  options: { signal?: AbortSignal | undefined; onNotification?: ((n: RpcNotification) => void) | undefined },
) => Promise<RpcReply>;

/** Options of one tool call beyond its arguments. */
export interface ToolCallOptions {
  signal?: AbortSignal;
  /** Progress of a long tool (a mine), asked for as MCP progress notifications and read as they stream in. */
  onProgress?: (progress: number, total: number | undefined, message: string | undefined) => void;
}

export interface ToolClient {
  /** Calls tool `name`: arguments and result typed by the wire contract; tool errors throw HubClientError. */
  call<N extends ToolName>(name: N, args: ArgsOf<N>, options?: ToolCallOptions): Promise<ResultOf<N>>;
  /** A tool by a name known only at run time (palace_call, a REPL): the parsed result, unchecked. */
  callAny(name: string, args: Record<string, unknown>, options?: ToolCallOptions): Promise<unknown>;
  /** The names of the tools this server lists (tools/list). */
  listTools(signal?: AbortSignal): Promise<string[]>;
  /** Any JSON-RPC method, its result (a JSON-RPC error throws HubClientError). */
  rpc(method: string, params: Record<string, unknown>, options?: ToolCallOptions): Promise<unknown>;
}

/** A tools/call result as its JSON value; an isError result throws HubClientError with the tool's code. */
export function parseToolResult(name: string, result: unknown): unknown {
  const r = result as { content?: { type: string; text?: string }[]; isError?: boolean };
  const text = r.content?.find((c) => c.type === 'text')?.text;
  if (text === undefined) throw new HubClientError('rpc.bad_result', `${name} returned no text content`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    if (!r.isError) return text;
    // Arguments the tool's schema refused: the MCP server's text names the first bad field ("... at kind").
    if (text.startsWith('MCP error -32602')) throw new HubClientError('input.invalid', text, null, /\bat ([A-Za-z_][\w.]*)\s*(?:;|$)/.exec(text)?.[1]);
    throw new HubClientError('tool.failed', text);
  }
  if (r.isError) {
    const e = (value as { error?: { code?: string; message?: string; field?: string } }).error;
    throw new HubClientError(e?.code ?? 'tool.failed', e?.message ?? text, null, e?.field);
  }
  return value;
}

/** A tool client over `handler`. `status` of a JSON-RPC error (HTTP: the response status) comes from `statusOf`. */
export function createToolClient(handler: RpcHandler): ToolClient {
  let nextId = 1;
  const rpc = async (method: string, params: Record<string, unknown>, options: ToolCallOptions = {}): Promise<unknown> => {
    const id = nextId++;
    const { onProgress, signal } = options;
    const reply = await handler(
      { jsonrpc: '2.0', id, method, params: onProgress ? { ...params, _meta: { progressToken: id } } : params },
      {
        signal,
        onNotification: onProgress
          ? (n) => {
              const p = n.params as { progressToken?: unknown; progress?: number; total?: number; message?: string } | undefined;
              if (n.method === 'notifications/progress' && (p?.progressToken === undefined || p.progressToken === id))
                onProgress(p?.progress ?? 0, p?.total, p?.message);
            }
          : undefined,
      },
    );
    if (reply.error) throw new HubClientError(reply.error.data?.code ?? 'rpc.error', reply.error.message ?? 'JSON-RPC error');
    return reply.result;
  };
  const callAny = async (name: string, args: Record<string, unknown>, options: ToolCallOptions = {}): Promise<unknown> =>
    parseToolResult(name, await rpc('tools/call', { name, arguments: args }, options));
  return {
    // The one unchecked step of the typed road: the hub's answer is trusted to be the contract's shape.
    call: async <N extends ToolName>(name: N, args: ArgsOf<N>, options?: ToolCallOptions) =>
      (await callAny(name, args as Record<string, unknown>, options)) as ResultOf<N>,
    callAny,
    async listTools(signal) {
      const result = (await rpc('tools/list', {}, signal ? { signal } : {})) as { tools?: { name: string }[] };
      return (result.tools ?? []).map((t) => t.name);
    },
    rpc,
  };
}
