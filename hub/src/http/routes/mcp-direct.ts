// One stateless 2025 JSON-RPC request served without the SDK's HTTP transport: the per-request
// server (buildServer) is connected to a one-request transport that writes the reply straight to the
// node response: a JSON body when the response is all there is, else the same `event: message` SSE
// frames the SDK's StreamableHTTPServerTransport writes (notifications first, then the response). The SDK transport converts each POST into a web Request and its reply into a web
// ReadableStream (@hono/node-server) and zod-parses every message it sends: that was most of the
// garbage of a stateless tools/call, and its GC pauses the tail of every call (docs/evidence.md).
// Anything this road does not serve exactly as the SDK would (a batch, initialize, a header the SDK
// refuses, a message its schema refuses) goes to the SDK transport instead (`directRequest`).

import type { IncomingMessage, ServerResponse } from 'node:http';

import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCRequestSchema, SUPPORTED_PROTOCOL_VERSIONS, type JSONRPCMessage, type JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';

/** The headers of the SDK transport's SSE reply to a POST (stateless: no session id). */
const SSE_HEADERS = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache, no-transform',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
} as const;

/**
 * The one request of a POST this road serves, or undefined for the SDK transport: a JSON-RPC
 * request that is the whole body (not a batch, not initialize) that the SDK transport would accept as it is (Accept, Content-Type,
 * MCP-Protocol-Version, and its JSON-RPC schema), parsed by that schema as the SDK parses it.
 */
export function directRequest(req: IncomingMessage, body: unknown): JSONRPCRequest | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const message = body as { method?: unknown; id?: unknown };
  if (typeof message.method !== 'string' || message.method === 'initialize' || message.id === undefined) return undefined;
  const accept = req.headers.accept;
  if (typeof accept !== 'string' || !accept.includes('application/json') || !accept.includes('text/event-stream')) return undefined;
  if (!isJsonContentType(req.headers['content-type'] ?? null)) return undefined;
  const version = req.headers['mcp-protocol-version'];
  if (version !== undefined && !(typeof version === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(version))) return undefined;
  const parsed = JSONRPCRequestSchema.safeParse(message);
  return parsed.success ? parsed.data : undefined;
}

function frame(message: JSONRPCMessage): string {
  return `event: message\ndata: ${JSON.stringify(message)}\n\n`;
}

/**
 * Serves `request` on `server` (a fresh per-request server) and writes its reply to `res`: the
 * response alone as JSON, or, once the request sent a notification first (progress, its log
 * messages), an SSE stream of those and then the response, which ends it. Messages not related to the request are dropped, as the stateless SDK transport drops
 * them (it has no standalone stream). The client going away closes the server, which aborts the
 * request's handler, as it did over the SDK transport.
 */
export async function serveDirect(server: McpServer, request: JSONRPCRequest, res: ServerResponse, authInfo: AuthInfo | undefined): Promise<void> {
  let answered = false;
  const write = (message: JSONRPCMessage, last: boolean): void => {
    if (res.writableEnded || res.destroyed) return;
    if (last && !res.headersSent) {
      // Nothing came before the response: one JSON body with its length, headers and all in one
      // write. The spec lets the server answer a request with JSON or SSE, and the client
      // must take both; JSON spares it an SSE parser (web streams, in the SDK client) per call.
      const body = JSON.stringify(message);
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
      return;
    }
    const data = frame(message);
    if (!res.headersSent) {
      res.writeHead(200, SSE_HEADERS);
      res.flushHeaders();
    }
    if (last) res.end(data);
    else res.write(data);
  };
  const transport: Transport = {
    start: async () => undefined,
    close: async () => {
      transport.onclose?.();
    },
    send: async (message: JSONRPCMessage, options?: TransportSendOptions) => {
      if (answered) return;
      const m = message as { id?: unknown; method?: unknown };
      const isResponse = m.method === undefined && m.id === request.id;
      if (isResponse) {
        answered = true;
        write(message, true);
      } else if (options?.relatedRequestId === request.id) write(message, false);
    },
  };
  res.on('close', () => {
    void server.close();
  });
  await server.connect(transport);
  transport.onmessage?.(request, authInfo ? { authInfo } : undefined);
}
