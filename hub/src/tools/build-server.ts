// The one MCP server factory: registers every tool of the registry on an McpServer. The HTTP route
// and the stdio server both call it. Tool results are JSON text; failures are isError results
// carrying {error: {code, message, field}} so agents see what to fix.

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

import { toHubError } from '../errors.js';
import { checkIdentityArgs } from '../memory/identity.js';
import type { HubServices } from '../services.js';
import { AGENT_INSTRUCTIONS } from './instructions.js';
import { TOOLS } from './registry.js';
import type { ToolContext, ToolDef } from './tool.js';

export interface BuildServerOptions {
  /** Runs a handler under the hub's global request lock (tools that are not lock-free). */
  withLock?: <T>(fn: () => Promise<T>) => Promise<T>;
  /** Called before a mutating tool runs; a HubError it throws becomes the tool's error result. */
  guardWrite?: (tool: ToolDef) => void;
}

function jsonResult(value: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }] };
}

let validator: AjvJsonSchemaValidator | undefined;

/**
 * One JSON-schema validator for every per-request server: building a new Ajv instance per request
 * was the largest single cost of a stateless MCP call. It holds compiled schemas only (no request state).
 */
function sharedValidator(): AjvJsonSchemaValidator {
  validator ??= new AjvJsonSchemaValidator();
  return validator;
}

export function buildServer(hub: HubServices, options: BuildServerOptions = {}): McpServer {
  const server = new McpServer(
    { name: 'palace', version: hub.version },
    { instructions: AGENT_INSTRUCTIONS, capabilities: { tools: { listChanged: false } }, jsonSchemaValidator: sharedValidator() },
  );
  for (const tool of TOOLS) {
    if (hub.readOnly && tool.mutating) continue;
    // A mutating tool sees every argument name, so an identity field it does not record is refused
    // rather than stripped in silence (memory/identity.ts); other unknown arguments are dropped as before.
    const declared = new Set(Object.keys(tool.input));
    const inputSchema: z.ZodType<Record<string, unknown>> = tool.mutating ? z.looseObject(tool.input) : z.object(tool.input);
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema,
        annotations: { readOnlyHint: !tool.mutating, openWorldHint: false },
      },
      async (args: Record<string, unknown>, extra): Promise<CallToolResult> => {
        const progressToken = extra._meta?.progressToken;
        const ctx: ToolContext = {
          signal: extra.signal,
          progress: async (progress, total, message) => {
            if (progressToken === undefined) return;
            await extra.sendNotification({
              method: 'notifications/progress',
              params: { progressToken, progress, ...(total === undefined ? {} : { total }), ...(message ? { message } : {}) },
            });
          },
          ...(tool.stepLocked && options.withLock ? { withLock: options.withLock } : {}),
        };
        let known = args;
        const run = async (): Promise<unknown> => tool.handler(known as never, hub, ctx);
        try {
          if (tool.mutating) {
            options.guardWrite?.(tool);
            checkIdentityArgs(tool.name, declared, args);
            known = Object.fromEntries(Object.entries(args).filter(([key]) => declared.has(key)));
          }
          const value = tool.lockFree || tool.stepLocked || !options.withLock ? await run() : await options.withLock(run);
          return jsonResult(value);
        } catch (err) {
          const error = toHubError(err);
          if (error.code === 'internal') hub.log.error(`${tool.name} failed`, { message: error.message });
          return { ...jsonResult({ error: error.toJSON() }), isError: true };
        }
      },
    );
  }
  return server;
}
