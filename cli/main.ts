// The `palace` command: parses arguments (commander) and dispatches to one file per command group.
// Unusable arguments exit 2; errors exit 1; results go to stdout, diagnostics to stderr.

import { Command, CommanderError } from 'commander';

import { exitQuietlyOnClosedPipe } from './closed-pipe.js';

import { registerArtifact } from './commands/artifact.js';
import { registerLogstream } from './commands/logstream.js';
import { registerServe } from './commands/serve.js';
import { registerMcp } from './commands/mcp.js';
import { registerPalace } from './commands/palace.js';
import { registerNavigate } from './commands/navigate.js';
import { registerDaemon } from './commands/daemon.js';
import { registerDiary } from './commands/diary.js';
import { registerKg } from './commands/kg.js';
import { registerMemory } from './commands/memory.js';
import { registerSetEmbedder } from './commands/set-embedder.js';
import { registerSync } from './commands/sync.js';
import { registerCypher } from './commands/cypher.js';
import { registerMine } from './commands/mine.js';
import { registerHook } from './commands/hook.js';
import { registerInit } from './commands/init.js';
import { registerRepair } from './commands/repair.js';
import { registerMigrate } from './commands/migrate.js';
import { registerMigrateToPostgres } from './commands/migrate-to-postgres.js';
import { registerCurate } from './commands/curate.js';
import { PALACE_VERSION } from '../hub/src/version.js';
import { EXIT, reportError } from './output.js';


export function buildProgram(): Command {
  const program = new Command('palace')
    .description('palace: shared memory hub and coordination log for AI coding agents')
    .version(PALACE_VERSION, '-V, --version')
    .option('--palace <path>', 'palace directory (default: PALACE_PALACE_PATH, ~/.palace/config.json, ~/.palace/palace)')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s), writeOut: (s) => process.stdout.write(s) });
  registerLogstream(program);
  registerArtifact(program);
  registerServe(program);
  registerMcp(program);
  registerDaemon(program);
  registerMemory(program);
  registerSetEmbedder(program);
  registerSync(program);
  registerCypher(program);
  registerInit(program);
  registerMine(program);
  registerHook(program);
  registerRepair(program);
  registerMigrate(program);
  registerMigrateToPostgres(program);
  registerKg(program);
  registerDiary(program);
  registerPalace(program);
  registerCurate(program);
  registerNavigate(program);
  for (const cmd of program.commands) {
    cmd.exitOverride();
    for (const sub of cmd.commands) sub.exitOverride();
  }
  return program;
}

async function main(argv: string[]): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version end here with exit code 0; every other parse failure is unusable input.
      process.exitCode = err.exitCode === 0 ? EXIT.ok : EXIT.usage;
      return;
    }
    // Anything a command did not report itself (e.g. start-up) ends as `Error: …`, never a stack.
    process.exitCode = reportError(err, argv.includes('--json'));
  }
}

exitQuietlyOnClosedPipe();
await main(process.argv);
