// The hub's MCP server in this process, reached over an in-memory transport: the road the CLI takes
// when no hub is live. Same registration code as buildServer (tool-server.ts), so the same zod
// validation and error results as over HTTP; given `tools`, it serves (and loads) only those.

import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

import { HubClientError, parseToolResult, type ToolCallOptions } from '../../client/hub-client.js';
import type { HubServices } from '../../services.js';
import type { ToolDef } from '../tools/tool.js';
import { buildToolServer, type BuildServerOptions } from './tool-server.js';

export interface InProcessOptions extends BuildServerOptions {
  /** The tools to serve (e.g. loadTools([name]) from tool-groups.ts); default every tool of the registry. */
  tools?: readonly ToolDef[];
}

export interface InProcessServer {
  /** Calls a tool and returns its parsed JSON result; a tool error throws HubClientError with its code. */
  callTool<T>(name: string, args: Record<string, unknown>, options?: ToolCallOptions): Promise<T>;
  close(): Promise<void>;
}

interface Pending {
  resolve: (message: { result?: unknown; error?: { message?: string; data?: { code?: string } } }) => void;
  onProgress: ToolCallOptions['onProgress'];
}

export async function connectInProcess(services: HubServices, options: InProcessOptions = {}): Promise<InProcessServer> {
  const { tools = (await import('../tools/registry.js')).TOOLS, ...serverOptions } = options;
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const server = buildToolServer(services, tools, serverOptions);
  await server.connect(serverSide);
  const pending = new Map<number, Pending>();
  clientSide.onmessage = (message: JSONRPCMessage) => {
    const m = message as { id?: unknown; method?: string; params?: { progressToken?: unknown; progress?: number; total?: number; message?: string } };
    if (m.method === 'notifications/progress') {
      const call = pending.get(Number(m.params?.progressToken));
      call?.onProgress?.(m.params?.progress ?? 0, m.params?.total, m.params?.message);
      return;
    }
    if (typeof m.id === 'number' && m.method === undefined) {
      const call = pending.get(m.id);
      pending.delete(m.id);
      call?.resolve(message as Parameters<Pending['resolve']>[0]);
    }
  };
  await clientSide.start();
  let nextId = 1;
  return {
    async callTool<T>(name: string, args: Record<string, unknown>, options: ToolCallOptions = {}): Promise<T> {
      const id = nextId++;
      const reply = await new Promise<Parameters<Pending['resolve']>[0]>((resolve) => {
        pending.set(id, { resolve, onProgress: options.onProgress });
        void clientSide.send({
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: { name, arguments: args, ...(options.onProgress ? { _meta: { progressToken: id } } : {}) },
        });
      });
      if (reply.error) throw new HubClientError(reply.error.data?.code ?? 'rpc.error', reply.error.message ?? 'JSON-RPC error');
      return parseToolResult<T>(name, reply.result);
    },
    async close() {
      await server.close();
    },
  };
}
