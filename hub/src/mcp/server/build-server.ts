// The one MCP server factory: every tool of the registry on an McpServer (tool-server.ts registers
// them). The HTTP route and the stdio server both call it.

import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

import type { HubServices } from '../../services.js';
import { TOOLS } from '../tools/registry.js';
import { buildToolServer, type BuildServerOptions } from './tool-server.js';

export type { BuildServerOptions } from './tool-server.js';

export function buildServer(hub: HubServices, options: BuildServerOptions = {}): McpServer {
  return buildToolServer(hub, TOOLS, options);
}
