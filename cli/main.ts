// The `palace` command: parses arguments (commander) and dispatches to one file per command group.
// Unusable arguments exit 2; errors exit 1; results go to stdout, diagnostics to stderr.

import { readFileSync } from 'node:fs';

import { Command, CommanderError } from 'commander';

import { registerArtifact } from './commands/artifact.js';
import { registerLogstream } from './commands/logstream.js';
import { EXIT } from './output.js';

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

export function buildProgram(): Command {
  const program = new Command('palace')
    .description('palace: shared memory hub and coordination log for AI coding agents')
    .version(version(), '-V, --version')
    .option('--palace <path>', 'palace directory (default: PALACE_PALACE_PATH, ~/.palace/config.json, ~/.palace/palace)')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s), writeOut: (s) => process.stdout.write(s) });
  registerLogstream(program);
  registerArtifact(program);
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
    throw err;
  }
}

await main(process.argv);
