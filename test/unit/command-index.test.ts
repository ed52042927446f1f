// The CLI loads only the module of the command it runs (cli/command-index.ts). This checks the index
// against what the modules really register, so a new command cannot be missing from it.

import { Command } from 'commander';
import { describe, expect, it } from 'vitest';

import { COMMAND_INDEX, COMMAND_MODULES, modulesFor, type CommandModule } from '../../cli/command-index.js';

const MODULES = Object.keys(COMMAND_MODULES) as CommandModule[];

/** The top-level commands (and aliases) each module registers on a fresh program. */
async function registered(): Promise<Map<CommandModule, string[]>> {
  const out = new Map<CommandModule, string[]>();
  for (const m of MODULES) {
    const program = new Command('palace');
    const host = m === 'sync' ? program.command('logstream') : undefined; // sync also adds `logstream sync`
    (await COMMAND_MODULES[m]())(program);
    out.set(
      m,
      program.commands.filter((c) => c !== host).flatMap((c) => [c.name(), ...c.aliases()]),
    );
  }
  return out;
}

describe('command index', () => {
  it('names, for every command a module registers, that module, and nothing else', async () => {
    const found = await registered();
    const expected: Record<string, CommandModule[]> = {};
    for (const [m, names] of found) for (const n of names) (expected[n] ??= []).push(m);
    expected.logstream?.push('sync');
    const index = Object.fromEntries(Object.entries(COMMAND_INDEX).map(([k, v]) => [k, [...v].sort()]));
    for (const list of Object.values(expected)) list.sort();
    expect(index).toEqual(expected);
  });

  it('picks the command after global options, and everything when there is none', () => {
    expect(modulesFor(['logstream', 'list', '--json'])).toEqual(['logstream', 'sync']);
    expect(modulesFor(['--palace', '/tmp/p', 'artifact', 'get', 'x'])).toEqual(['artifact']);
    expect(modulesFor(['--palace', 'search', 'status'])).toEqual(['memory']); // 'search' is the palace path
    expect(modulesFor(['--version'])).toEqual([]);
    expect(modulesFor(['-V'])).toEqual([]);
    expect(modulesFor([])).toEqual(MODULES);
    expect(modulesFor(['--help'])).toEqual(MODULES);
    expect(modulesFor(['logstrem', 'list'])).toEqual(MODULES); // a typo: commander suggests from all
  });
});
