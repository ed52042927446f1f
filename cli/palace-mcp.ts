// `palace-mcp --transport stdio|http`: the MCP server entry. stdio is `palace mcp`; http is the hub,
// exactly as `palace serve` (its wrapper) runs it: a non-loopback bind with no token gets a generated one.

import { Command, CommanderError } from 'commander';

import { runMcp } from './commands/mcp.js';
import { addServeFlags, runServe } from './commands/serve.js';
import { EXIT } from './output.js';

const program = addServeFlags(
  new Command('palace-mcp')
    .description('palace MCP server')
    .option('--transport <transport>', 'stdio or http', 'stdio')
    .option('--palace <path>', 'palace directory')
    .option('--profile <profile>', 'stdio: tool profile, full or lean (default PALACE_MCP_PROFILE or full)'),
)
  .exitOverride()
  .action(async (opts: Record<string, unknown>) => {
    if (opts.transport === 'http') await runServe(opts);
    else if (opts.transport === 'stdio') await runMcp(opts);
    else {
      process.stderr.write(`palace-mcp: --transport must be stdio or http, got '${String(opts.transport)}'\n`);
      process.exitCode = EXIT.usage;
    }
  });

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (!(err instanceof CommanderError)) throw err;
  process.exitCode = err.exitCode === 0 ? EXIT.ok : EXIT.usage;
}
