// Which module registers each top-level `palace` command, so a call loads only the module(s) it runs
// (a CLI start pays for its own command, not for the hub's memory, LanceDB, arrow or embedders).
// test/unit/command-index.test.ts registers every module and checks this table against what it finds.

import type { Command } from 'commander';

type Register = (program: Command) => void;

/** Every command module, in registration order (order matters: `sync` adds `logstream sync`). */
export const COMMAND_MODULES = {
  logstream: async (): Promise<Register> => (await import('./commands/logstream.js')).registerLogstream,
  artifact: async (): Promise<Register> => (await import('./commands/artifact.js')).registerArtifact,
  serve: async (): Promise<Register> => (await import('./commands/serve.js')).registerServe,
  mcp: async (): Promise<Register> => (await import('./commands/mcp.js')).registerMcp,
  daemon: async (): Promise<Register> => (await import('./commands/daemon.js')).registerDaemon,
  memory: async (): Promise<Register> => (await import('./commands/memory.js')).registerMemory,
  'set-embedder': async (): Promise<Register> => (await import('./commands/set-embedder.js')).registerSetEmbedder,
  sync: async (): Promise<Register> => (await import('./commands/sync.js')).registerSync,
  cypher: async (): Promise<Register> => (await import('./commands/cypher.js')).registerCypher,
  init: async (): Promise<Register> => (await import('./commands/init.js')).registerInit as Register,
  mine: async (): Promise<Register> => (await import('./commands/mine.js')).registerMine,
  hook: async (): Promise<Register> => (await import('./commands/hook.js')).registerHook,
  repair: async (): Promise<Register> => (await import('./commands/repair.js')).registerRepair,
  migrate: async (): Promise<Register> => (await import('./commands/migrate.js')).registerMigrate,
  'migrate-to-postgres': async (): Promise<Register> =>
    (await import('./commands/migrate-to-postgres.js')).registerMigrateToPostgres,
  kg: async (): Promise<Register> => (await import('./commands/kg.js')).registerKg,
  diary: async (): Promise<Register> => (await import('./commands/diary.js')).registerDiary,
  palace: async (): Promise<Register> => (await import('./commands/palace.js')).registerPalace,
  curate: async (): Promise<Register> => (await import('./commands/curate.js')).registerCurate,
  navigate: async (): Promise<Register> => (await import('./commands/navigate.js')).registerNavigate,
  reserve: async (): Promise<Register> => (await import('./commands/reserve.js')).registerReserve,
  patch: async (): Promise<Register> => (await import('./commands/patch.js')).registerPatch as Register,
  agent: async (): Promise<Register> => (await import('./commands/agent.js')).registerAgent,
} as const;

export type CommandModule = keyof typeof COMMAND_MODULES;

/** Top-level command name -> the modules that define it (and its subcommands). */
export const COMMAND_INDEX: Readonly<Record<string, readonly CommandModule[]>> = {
  logstream: ['logstream', 'sync'],
  artifact: ['artifact'],
  agent: ['agent'],
  serve: ['serve'],
  mcp: ['mcp'],
  daemon: ['daemon'],
  search: ['memory'],
  status: ['memory'],
  drawer: ['memory'],
  rate: ['memory'],
  duplicate: ['memory'],
  tags: ['memory'],
  wings: ['memory'],
  'set-embedder': ['set-embedder'],
  sync: ['sync'],
  cypher: ['cypher'],
  init: ['init'],
  mine: ['mine'],
  mined: ['mine'],
  sweep: ['mine'],
  split: ['mine'],
  hook: ['hook'],
  instructions: ['hook'],
  repair: ['repair'],
  'repair-status': ['repair'],
  replay: ['migrate'],
  migrate: ['migrate'],
  'migrate-wings': ['migrate'],
  'migrate-to-postgres': ['migrate-to-postgres'],
  kg: ['kg'],
  diary: ['diary'],
  'wake-up': ['diary'],
  list: ['palace'],
  move: ['palace'],
  graph: ['palace'],
  stats: ['palace'],
  taxonomy: ['palace'],
  rooms: ['palace'],
  checkpoint: ['curate'],
  'bulk-move': ['curate'],
  purge: ['curate'],
  prune: ['curate'],
  'rename-wing': ['curate'],
  export: ['curate'],
  import: ['curate'],
  tunnels: ['navigate'],
  hallways: ['navigate'],
  hallway: ['navigate'],
  walk: ['navigate'],
  overlap: ['navigate'],
  why: ['navigate'],
  aaak: ['navigate'],
  compress: ['navigate'],
  reserve: ['reserve'],
  reservations: ['reserve'],
  release: ['reserve'],
  guard: ['reserve'],
  patch: ['patch'],
};

/** Global options that take a value (their value is not the command name). */
const VALUE_OPTIONS = new Set(['--palace']);

/**
 * The modules a command line needs: the ones defining its command; none for a bare --version or the
 * top-level help (`palace`, `palace --help`, `palace help`: a table in cli/help.ts); all of them for an
 * unknown command (a typo that commander suggests a fix for) or `palace help <command>`.
 */
export function modulesFor(args: readonly string[]): CommandModule[] {
  let name: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    if (VALUE_OPTIONS.has(arg)) i++;
    else if (!arg.startsWith('-')) {
      name = arg;
      break;
    }
  }
  const all = Object.keys(COMMAND_MODULES) as CommandModule[];
  if (name === undefined) return [];
  if (name === 'help') {
    const topic = args.slice(args.indexOf('help') + 1).find((a) => !a.startsWith('-'));
    const wanted = topic === undefined ? [] : COMMAND_INDEX[topic];
    return wanted ? all.filter((m) => wanted.includes(m)) : all;
  }
  const wanted = COMMAND_INDEX[name];
  return wanted ? all.filter((m) => wanted.includes(m)) : all;
}
