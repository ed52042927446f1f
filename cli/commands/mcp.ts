// `palace mcp` (and `palace-mcp --transport stdio`): the stdio MCP server that forwards to the live hub.

import type { Command } from 'commander';

import { makeLogger } from '../../hub/src/log.js';
import { parseProfile } from '../../hub/src/mcp/server/profiles.js';
import { cliConfig } from '../config.js';
import { runStdioProxy } from '../stdio-proxy.js';

export async function runMcp(opts: Record<string, unknown>): Promise<void> {
  const config = cliConfig({ palace: typeof opts.palace === 'string' ? opts.palace : undefined });
  const profile = typeof opts.profile === 'string' ? parseProfile(opts.profile, '--profile') : config.mcpProfile;
  await runStdioProxy({ config, log: makeLogger('palace:mcp'), profile });
}

export function registerMcp(program: Command): void {
  program
    .command('mcp')
    .description('stdio MCP server for Claude Code / Codex / Cursor; forwards to the live hub when one serves this palace')
    .option('--profile <profile>', 'tool profile: full (every tool) or lean (everyday tools + palace_tools/palace_call); default PALACE_MCP_PROFILE or full')
    .action(async (_opts: Record<string, unknown>, cmd: Command) => runMcp(cmd.optsWithGlobals()));
}
