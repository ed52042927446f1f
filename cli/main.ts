// The `palace` command: parses arguments (commander) and dispatches to one file per command group.
// Unusable arguments exit 2; errors exit 1; results go to stdout, diagnostics to stderr. Only the
// module of the command being run is loaded (cli/command-index.ts), so a call starts at once.

import { Command, CommanderError } from 'commander';

import { PALACE_VERSION } from '../hub/src/version.js';
import { exitQuietlyOnClosedPipe } from './closed-pipe.js';
import { COMMAND_MODULES, modulesFor, type CommandModule } from './command-index.js';
import { helpText } from './help.js';
import { EXIT, reportError } from './output.js';

/** The `palace` program with the given command modules registered (all of them by default). */
export async function buildProgram(
  modules: readonly CommandModule[] = Object.keys(COMMAND_MODULES) as CommandModule[],
): Promise<Command> {
  const program = new Command('palace')
    .description('palace: shared memory hub and coordination log for AI coding agents')
    .version(PALACE_VERSION, '-V, --version')
    .option('--palace <path>', 'palace directory (default: PALACE_PALACE_PATH, ~/.palace/config.json, ~/.palace/palace)')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s), writeOut: (s) => process.stdout.write(s) });
  // The top-level help is grouped, from a table (cli/help.ts): it needs no command module loaded.
  program.helpInformation = helpText;
  // Loaded together, registered in COMMAND_MODULES order.
  const registers = await Promise.all(modules.map((m) => COMMAND_MODULES[m]()));
  for (const register of registers) register(program);
  for (const cmd of program.commands) {
    cmd.exitOverride();
    for (const sub of cmd.commands) sub.exitOverride();
  }
  return program;
}

/** `palace`, `palace --help`, `palace help` (global --palace aside): the grouped help, nothing loaded. */
function wantsTopHelp(args: readonly string[]): boolean {
  const rest = args.filter((a, i) => a !== '--palace' && args[i - 1] !== '--palace');
  return rest.every((a) => a === '--help' || a === '-h' || a === 'help');
}

async function main(argv: string[]): Promise<void> {
  if (wantsTopHelp(argv.slice(2))) {
    process.stdout.write(helpText());
    return;
  }
  try {
    await (await buildProgram(modulesFor(argv.slice(2)))).parseAsync(argv);
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
// Not a top-level await: the CLI bundle (scripts/build-cli-bundle.mjs) is a CommonJS script.
void main(process.argv);
