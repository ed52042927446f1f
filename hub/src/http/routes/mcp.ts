// /mcp: MCP Streamable HTTP through the official SDK. Every POST is served by a fresh server from the
// one factory (stateless), so clients follow a restarted hub; a session (mcp-sessions.ts) holds only
// subscriptions and the logging level, and GET /mcp is its notification stream. `?profile=lean`
// selects the lean tool profile.

import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { Context } from 'koa';

import { HubError } from '../../errors.js';
import { directRequest, serveDirect } from './mcp-direct.js';
import { McpSessions } from './mcp-sessions.js';
import type { HubServices } from '../../services.js';
import { buildServer, type BuildServerOptions } from '../../mcp/server/build-server.js';
import { encodeModernResult, eraOf, serveModern, type RpcMessage } from '../../mcp/server/modern.js';
import { parseProfile } from '../../mcp/server/profiles.js';
import { toolsOnlyRequest } from '../../mcp/server/tool-server.js';
import { MUTATING_TOOLS } from '../../mcp/tools/registry.js';
import { BODY_ENCODING_MESSAGE, MAX_BODY_BYTES, readJsonBody } from '../read-body.js';

interface JsonRpcMessage {
  jsonrpc?: unknown;
  id?: unknown;
  method?: unknown;
  params?: { name?: unknown; clientInfo?: { name?: unknown; version?: unknown } };
}

function messagesOf(body: unknown): JsonRpcMessage[] {
  if (Array.isArray(body)) return body as JsonRpcMessage[];
  return body && typeof body === 'object' ? [body as JsonRpcMessage] : [];
}

function clientInfoOf(m: JsonRpcMessage): { name?: unknown; version?: unknown } | undefined {
  const meta = (m.params as { _meta?: Record<string, unknown> } | undefined)?._meta;
  const info = meta?.['io.modelcontextprotocol/clientInfo'];
  return info && typeof info === 'object' ? (info as { name?: unknown; version?: unknown }) : undefined;
}

function rpcError(ctx: Context, status: number, id: unknown, code: number, message: string, data?: unknown): void {
  ctx.status = status;
  ctx.body = { jsonrpc: '2.0', id: id ?? null, error: { code, message, ...(data === undefined ? {} : { data }) } };
}

/** A tools/call answered here with the isError result the tool itself would give. */
function toolError(ctx: Context, id: unknown, error: HubError): void {
  ctx.status = 200;
  ctx.body = {
    jsonrpc: '2.0',
    id: id ?? null,
    result: { content: [{ type: 'text', text: JSON.stringify({ error: error.toJSON() }) }], isError: true },
  };
}

const SESSION_HEADER = 'mcp-session-id';

/** GET /mcp: a session's notification stream; DELETE /mcp: ends a session. */
export function mcpSessionHandlers(sessions: McpSessions) {
  return {
    stream(ctx: Context): void {
      const id = ctx.get(SESSION_HEADER);
      const session = id ? sessions.get(id) : undefined;
      if (!session)
        throw new HubError('http.method_not_allowed', 'GET /mcp is the notification stream of a session: initialize first and send its Mcp-Session-Id', {
          data: { allow: ['POST'] },
        });
      if (!ctx.accepts('text/event-stream')) throw new HubError('input.invalid', 'GET /mcp answers text/event-stream only (Accept)', { field: 'Accept' });
      ctx.respond = false;
      session.attachStream(ctx.res);
    },
    end(ctx: Context): void {
      const id = ctx.get(SESSION_HEADER);
      if (!id)
        throw new HubError('http.method_not_allowed', 'DELETE /mcp ends a session: send its Mcp-Session-Id', { data: { allow: ['POST'] } });
      sessions.end(id);
      ctx.status = 204;
    },
  };
}

export function mcpHandler(hub: HubServices, options: BuildServerOptions, sessions: McpSessions = new McpSessions(hub)) {
  return async (ctx: Context): Promise<void> => {
    const query = ctx.query.profile;
    // ?profile=lean lists the everyday tools plus palace_tools/palace_call (mcp/server/profiles.ts).
    const profile = parseProfile(Array.isArray(query) ? query.join(',') : query, 'profile');
    const parsed = await readJsonBody(ctx.req);
    if (!parsed.ok)
      return parsed.reason === 'too_large'
        ? rpcError(ctx, 413, null, -32600, `Request too large (limit ${MAX_BODY_BYTES} bytes)`)
        : parsed.reason === 'encoding'
          ? rpcError(ctx, 400, null, -32700, `Parse error: ${BODY_ENCODING_MESSAGE}`, { code: 'input.invalid', field: 'body' })
          : rpcError(ctx, 400, null, -32700, 'Parse error: the body is not valid JSON');
    const body = parsed.value;
    const messages = messagesOf(body);
    if (messages.length === 0) return rpcError(ctx, 400, null, -32600, 'Invalid Request: expected a JSON-RPC message');
    if (messages.some((m) => !m || typeof m !== 'object' || Array.isArray(m)))
      return rpcError(ctx, 400, null, -32600, 'Invalid Request: every batch entry must be a JSON-RPC object');
    // 2026-07-28 (a version in _meta or the header, or server/discover): no session, no initialize.
    const headerVersion = ctx.get('MCP-Protocol-Version') || undefined;
    const modern = messages.some((m) => eraOf(m as RpcMessage, headerVersion) === 'modern');
    for (const m of messages) {
      const method = typeof m.method === 'string' ? m.method : null;
      hub.stats.seeMcp(
        { userAgent: ctx.get('User-Agent') || null, remote: ctx.ip || null },
        method === 'tools/call' && typeof m.params?.name === 'string' ? `tools/call ${m.params.name}` : method,
        // Who the client says it is, for /statusz only (never identity): initialize's clientInfo, or 2026 discover's _meta one.
        method === 'initialize' ? m.params?.clientInfo : method === 'server/discover' ? clientInfoOf(m) : undefined,
      );
      // A refused write is a tool failure like any other: the isError result, not a JSON-RPC error.
      if (!modern && hub.readOnly && method === 'tools/call' && typeof m.params?.name === 'string' && MUTATING_TOOLS.has(m.params.name) && messages.length === 1)
        return toolError(ctx, m.id, new HubError('hub.read_only', `${m.params.name} is refused: this hub is read-only (--read-only)`));
    }
    if (modern) {
      if (messages.length > 1) return rpcError(ctx, 400, null, -32600, 'Invalid Request: a 2026-07-28 POST carries one JSON-RPC message (no batches)');
      return serveModernHttp(ctx, hub, { ...options, profile, listens: sessions.listens }, messages[0] as RpcMessage, headerVersion);
    }
    // A wait past the cap is refused here, before an MCP server is built for it: a flood of refused
    // long-polls costs a JSON parse each. The tool result has the shape the tool itself would give.
    const only = messages.length === 1 ? messages[0] : undefined;
    if (only?.method === 'tools/call' && only.params?.name === 'palace_event_wait') {
      const refused = hub.stats.waits.refusal(hub.config.waitMaxConcurrent);
      if (refused) return toolError(ctx, only.id, refused);
    }
    // initialize opens a session (its id in the response header); a request naming one joins it.
    const initializing = messages.some((m) => m.method === 'initialize');
    const session = initializing ? sessions.create() : sessions.get(ctx.get(SESSION_HEADER) || undefined);
    if (session && initializing) ctx.res.setHeader('Mcp-Session-Id', session.id);
    const server = buildServer(hub, { ...options, profile, toolsOnly: toolsOnlyRequest(messages), ...(session ? { session } : {}) });
    ctx.respond = false;
    // One plain request (every tools/call of a client): served without the SDK's HTTP transport (mcp-direct.ts).
    const direct = directRequest(ctx.req, body);
    if (direct) return serveDirect(server, direct, ctx.res, (ctx.req as { auth?: AuthInfo }).auth);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    ctx.res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(ctx.req, ctx.res, body);
  };
}

const SSE_HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache, no-transform',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
};
const LISTEN_HEARTBEAT_MS = 15_000;

/**
 * One 2026-07-28 request over HTTP: answered as JSON, or as an SSE stream when it may send
 * notifications first (a progress token or a log level, with text/event-stream accepted) and always
 * for subscriptions/listen (its stream stays open until the client closes it or the hub stops).
 * A notification POST is 202.
 */
async function serveModernHttp(
  ctx: Context,
  hub: HubServices,
  options: Parameters<typeof serveModern>[1],
  message: RpcMessage,
  headerVersion: string | undefined,
): Promise<void> {
  if (message.id === undefined || message.id === null) {
    ctx.status = 202;
    return;
  }
  const wantsSse = ctx.accepts('text/event-stream') !== false && (ctx.get('Accept') || '').includes('text/event-stream');
  const listen = message.method === 'subscriptions/listen';
  if (listen && !wantsSse) return rpcError(ctx, 406, message.id, -32600, 'subscriptions/listen answers text/event-stream: send Accept: text/event-stream', { code: 'input.invalid', field: 'Accept' });
  // A wait past the cap is refused before anything runs, as for 2025 (the tool's own result shape).
  if (message.method === 'tools/call' && message.params?.name === 'palace_event_wait') {
    const refused = hub.stats.waits.refusal(hub.config.waitMaxConcurrent);
    if (refused) {
      ctx.status = 200;
      ctx.body = {
        jsonrpc: '2.0',
        id: message.id,
        result: encodeModernResult(hub, 'tools/call', { content: [{ type: 'text', text: JSON.stringify({ error: refused.toJSON() }) }], isError: true }),
      };
      return;
    }
  }
  const meta = (message.params?._meta ?? {}) as Record<string, unknown>;
  const streaming = listen || (wantsSse && (meta.progressToken !== undefined || meta['io.modelcontextprotocol/logLevel'] !== undefined));
  const res = ctx.res;
  ctx.respond = false;
  const controller = new AbortController();
  res.on('close', () => controller.abort());
  let heartbeat: NodeJS.Timeout | undefined;
  let answered = false;
  const send = (m: Record<string, unknown>): void => {
    if (res.writableEnded || res.destroyed) return;
    const response = m.method === undefined;
    if (streaming) {
      if (!res.headersSent) res.writeHead(200, SSE_HEADERS);
      res.write(`event: message\ndata: ${JSON.stringify(m)}\n\n`);
      if (response) {
        answered = true;
        res.end();
      }
    } else if (response) {
      answered = true;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(m));
    }
  };
  if (listen) {
    res.socket?.setTimeout(0);
    res.socket?.setNoDelay(true);
    res.writeHead(200, SSE_HEADERS);
    heartbeat = setInterval(() => res.write(': ping\n\n'), LISTEN_HEARTBEAT_MS);
    heartbeat.unref();
  }
  try {
    await serveModern(hub, options, message, { send, signal: controller.signal, authInfo: (ctx.req as { auth?: AuthInfo }).auth, headerVersion });
  } finally {
    clearInterval(heartbeat);
    if (!answered && !res.writableEnded) {
      if (!res.headersSent) res.writeHead(204);
      res.end();
    }
  }
}
