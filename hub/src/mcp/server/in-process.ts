// The hub's MCP server in this process, as a JSON-RPC handler (a request in, its reply out): the road
// the CLI takes when no hub is live, through the same typed tool client as the HTTP road
// (client/tool-client.ts). Same registration code as buildServer (tool-server.ts), so the same zod
// validation and error results as over HTTP; given `tools`, it serves (and loads) only those.
// No SDK in-memory transport: the server is connected to a transport whose only peer is handle().

import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

import { createToolClient, type RpcHandler, type RpcNotification, type RpcReply, type ToolClient } from '../../client/tool-client.js';
import type { HubServices } from '../../services.js';
import type { ToolDef } from '../tools/tool.js';
import { buildToolServer, type BuildServerOptions } from './tool-server.js';

export interface InProcessOptions extends BuildServerOptions {
  /** The tools to serve (e.g. loadTools([name]) from tool-groups.ts); default every tool of the registry. */
  tools?: readonly ToolDef[];
}

export interface InProcessServer {
  /** Answers one JSON-RPC request, as POST /mcp would. */
  handle: RpcHandler;
  /** The typed tool client over handle(). */
  client: ToolClient;
  close(): Promise<void>;
}

interface Pending {
  resolve(reply: RpcReply): void;
  onNotification: ((n: RpcNotification) => void) | undefined;
}

/** The server side of handle(): what the server sends goes to the request it belongs to. */
class HandlerTransport implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  readonly pending = new Map<number, Pending>();

  start(): Promise<void> {
    return Promise.resolve();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const m = message as { id?: unknown; method?: string; params?: { progressToken?: unknown } };
    if (m.method === undefined) {
      const call = typeof m.id === 'number' ? this.pending.get(m.id) : undefined;
      if (call) {
        this.pending.delete(m.id as number);
        call.resolve(message as RpcReply);
      }
    } else if (m.id === undefined) {
      // A notification: to the request it relates to (progress names its token, which is the request id).
      const owner = options?.relatedRequestId ?? m.params?.progressToken;
      this.pending.get(Number(owner))?.onNotification?.(message as RpcNotification);
    }
    // A server-to-client request (elicitation, sampling) has no one to answer it here.
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.onclose?.();
    return Promise.resolve();
  }
}

export async function connectInProcess(services: HubServices, options: InProcessOptions = {}): Promise<InProcessServer> {
  const { tools = (await import('../tools/registry.js')).TOOLS, ...serverOptions } = options;
  const transport = new HandlerTransport();
  const server = buildToolServer(services, tools, serverOptions);
  await server.connect(transport);
  const handle: RpcHandler = (request, { signal, onNotification }) =>
    new Promise<RpcReply>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason as Error);
      const onAbort = (): void => {
        transport.pending.delete(request.id);
        // The tool sees its signal abort (a wait ends), as when an HTTP client goes away.
        transport.onmessage?.({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: request.id, reason: 'aborted' } });
        reject(signal?.reason as Error);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      transport.pending.set(request.id, {
        resolve: (reply) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(reply);
        },
        onNotification,
      });
      transport.onmessage?.(request as JSONRPCMessage);
    });
  return {
    handle,
    client: createToolClient(handle),
    async close() {
      await server.close();
    },
  };
}
