// The CLI loads only the module of the command it runs (cli/command-index.ts). This checks the index
// against what the modules really register, so a new command cannot be missing from it.

import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

import { Command } from 'commander';
import { describe, expect, it } from 'vitest';

import { COMMAND_INDEX, COMMAND_MODULES, modulesFor, type CommandModule } from '../../cli/command-index.js';
import { HELP_GROUPS, helpCommandNames, helpText } from '../../cli/help.js';

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
    expect(modulesFor([])).toEqual([]); // the grouped help (cli/help.ts)
    expect(modulesFor(['--help'])).toEqual([]);
    expect(modulesFor(['help'])).toEqual([]);
    expect(modulesFor(['help', 'artifact'])).toEqual(['artifact']);
    expect(modulesFor(['logstrem', 'list'])).toEqual(MODULES); // a typo: commander suggests from all
  });
});

describe('grouped help (issue 31)', () => {
  it('lists every top-level command exactly once, in one of the four groups, and nothing that is not a command', async () => {
    const names = helpCommandNames();
    expect(new Set(names).size, 'a command listed twice').toBe(names.length);
    const commands = [...new Set([...(await registered()).values()].flat())].sort();
    expect([...names].sort()).toEqual(commands);
    expect(HELP_GROUPS.map((g) => g.title.split(' ')[0])).toEqual(['Start', 'Coordinate', 'Remember', 'Operate']);
  });

  it('is what `palace --help` prints from the text the build wrote (dist/cli/help.txt), and `palace help` alike', () => {
    expect(helpText()).toContain('\nStart here:\n  init <dir>');
    for (const args of [['--help'], ['help'], []]) {
      const r = spawnSync(process.execPath, ['bin/palace.js', ...args], { encoding: 'utf8' });
      expect(r.status).toBe(0);
      expect(r.stdout).toBe(helpText());
    }
    expect(readFileSync('dist/cli/help.txt', 'utf8')).toBe(helpText());
  });
});
