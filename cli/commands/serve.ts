// `palace serve`: the hub in the foreground (HTTP MCP at /mcp, SSE, status). Flags as in the spec;
// the token comes from --token, PALACE_MCP_HTTP_TOKEN, or is generated for non-loopback binds.

import type { Command } from 'commander';

import type { ServeFlags } from '../../hub/src/main.js';
import { childEnv } from '../config.js';

export function addServeFlags(cmd: Command): Command {
  return cmd
    .option('--host <host>', 'bind address; 0.0.0.0 accepts remote clients', '127.0.0.1')
    .option('--port <port>', 'listen port (default: PALACE_PORT, else 8765; 0 = any free port)')
    .option('--backend <name>', 'storage backend (default: config or PALACE_BACKEND)')
    .option('--tls-cert <path>', 'PEM certificate: serve https (with --tls-key)')
    .option('--tls-key <path>', 'PEM private key (with --tls-cert)')
    .option('--read-only', 'recall only: mutating tools are hidden and refused')
    .option('--token <token>', 'bearer token (prefer PALACE_MCP_HTTP_TOKEN: argv is visible to other users)')
    .option('--allow-insecure', 'allow a non-loopback bind without a token (only behind a trusted proxy)');
}

/** The hub in the foreground, for `palace serve` and `palace-mcp --transport http` alike (same flags, same tokens). */
export async function runServe(opts: Record<string, unknown>): Promise<never> {
  const flags: ServeFlags = { ...(opts as ServeFlags), generateToken: true };
  // Loaded here, not at the top: `palace-mcp --transport stdio` shares these flags and must stay thin.
  const { serve } = await import('../../hub/src/main.js');
  const code = await serve(flags, childEnv(), (text) => process.stdout.write(text));
  process.exit(code);
}

export function registerServe(program: Command): void {
  addServeFlags(program.command('serve').description('run the hub in the foreground (HTTP MCP on /mcp)')).action(
    async (_opts: Record<string, unknown>, cmd: Command) => runServe(cmd.optsWithGlobals()),
  );
}
