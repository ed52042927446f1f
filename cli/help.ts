// `palace --help`: the commands in four groups, from a table here, so the top-level help loads no
// command module (as fast as --version). A new command goes in COMMAND_INDEX (cli/command-index.ts)
// and in one group below; test/unit/command-index.test.ts fails until both name it.

export interface HelpGroup {
  title: string;
  /** [usage, one-line summary]; the usage's first word is the top-level command. */
  commands: ReadonlyArray<readonly [string, string]>;
}

export const HELP_GROUPS: readonly HelpGroup[] = [
  {
    title: 'Start here',
    commands: [
      ['init <dir>', 'set up ~/.palace, propose wings and rooms for the projects in <dir>, allow mining it'],
      ['mine [dir]', 'file a project, transcripts (--mode convos) or documents (--mode extract) as drawers'],
      ['serve', 'run the hub in the foreground; prints the MCP client configuration to paste'],
      ['daemon start|stop|status', 'run the hub in the background'],
      ['mcp', 'the stdio MCP server for Claude Code, Codex, Cursor (forwards to the live hub)'],
      ['search <query>', 'search the palace (meaning + keywords); quotes drawers verbatim'],
      ['status', 'what this palace holds and who serves it'],
      ['instructions [topic]', 'print the agent rules (rules, mine, hooks)'],
    ],
  },
  {
    title: 'Coordinate (agents delegating to agents)',
    commands: [
      ['logstream <subcommand>', 'the coordination log: append, ready, ack, task, tasks, watch, list, wait, ...'],
      ['patch submit|apply', 'file a task\'s patch checked against its base commit (worker) / apply it (requester)'],
      ['artifact put|get', 'exact content (patches, logs, reports) with its sha256'],
      ['agent add|list|rotate|revoke|retire', "per-agent secrets: the hub binds each agent's writes to it (docs/identity.md)"],
      ['reserve <paths...>', 'reserve paths you are editing (advisory; conflicts refused)'],
      ['reservations', 'file reservations in force now'],
      ['release <reservation_id>', 'release a file reservation'],
      ['guard install|check', 'git pre-commit guard for exclusive reservations'],
      ['hook inbox|run', 'hooks for Claude Code and Codex: new work into a session, file its transcript'],
      ['sync [trust|share]', 'pull from peer hubs now; trust <url> pins a peer; share <wing>|--kg --with <peer> replicates a wing or the graph'],
    ],
  },
  {
    title: 'Remember (memory: wings, rooms, drawers, knowledge graph)',
    commands: [
      ['drawer get|add|delete|update', 'one drawer'],
      ['list', 'drawer metadata in filing order (--wing, --room)'],
      ['wings', 'wings with their drawer counts'],
      ['rooms', 'rooms: list (default), add, rename, remove'],
      ['taxonomy', 'wing → room → drawer count'],
      ['mined', 'what has been mined: from where, into which wing, when'],
      ['sweep [dir]', 'mine transcripts not yet mined (Claude Code, Codex, Gemini CLI sessions)'],
      ['split <dir>', 'split concatenated transcript files into one file per session'],
      ['checkpoint', 'file several memories (and a diary entry) in one call'],
      ['duplicate', 'is this content already in the palace?'],
      ['rate <drawer_id>', 'say whether a drawer was useful'],
      ['tags', 'tags in use, with counts'],
      ['move <drawer_id>', 'move a drawer to another wing and/or room'],
      ['kg <subcommand>', 'knowledge graph: temporal facts'],
      ['diary <subcommand>', "an agent's own diary"],
      ['wake-up', 'session-start context: identity plus the most important drawers'],
      ['graph', 'wing/room/tunnel counts and a knowledge-graph slice'],
      ['stats', 'palace statistics'],
      ['tunnels', 'links between wings'],
      ['hallways', 'rooms of one wing joined by shared entities'],
      ['hallway list|delete', 'one hallway'],
      ['walk', 'walk from a room through hallways and tunnels'],
      ['overlap [wing_a] [wing_b]', 'what two wings share'],
      ['why <drawer_id>', 'why a drawer sits in its wing and room'],
      ['aaak', 'the AAAK compact summary dialect'],
      ['compress', 'write an AAAK summary beside each drawer'],
    ],
  },
  {
    title: 'Operate (maintenance, curation, migration)',
    commands: [
      ['set-embedder', "choose this palace's embedding model"],
      ['repair', 'check or rebuild the vector index (--tasks: the task projection)'],
      ['repair-status', 'the vector index against the drawers, read-only'],
      ['replay', 'apply journaled memory writes that were never indexed'],
      ['bulk-move [drawer_ids...]', 'move every matching drawer (dry run unless --apply)'],
      ['rename-wing <wing> <new_wing>', 'rename a wing with its drawers and rooms'],
      ['purge', 'delete drawers by source, wing or room (dry run unless --confirm)'],
      ['prune', 'delete drawers older than N days (dry run unless --confirm)'],
      ['export <out_dir>', 'the palace as Markdown and JSONL'],
      ['import <path>', 'load an export'],
      ['migrate', "bring the palace's stores to the current version; import MemPalace"],
      ['migrate-wings', 'normalize legacy wing names'],
      ['migrate-to-postgres', 'copy drawers and knowledge graph into Postgres + pgvector'],
      ['cypher <query>', 'read-only Cypher over the knowledge graph (pgvector backend)'],
    ],
  },
];

/** The top-level command each help line is about. */
export function helpCommandNames(): string[] {
  return HELP_GROUPS.flatMap((g) => g.commands.map(([usage]) => usage.split(' ')[0] ?? usage));
}

/** The text of `palace --help`. */
export function helpText(): string {
  const width = Math.max(...HELP_GROUPS.flatMap((g) => g.commands.map(([usage]) => usage.length))) + 2;
  const lines = [
    'palace: shared memory hub and coordination log for AI coding agents',
    '',
    'Usage: palace [--palace <path>] <command> [options]      palace <command> --help: its options',
  ];
  for (const group of HELP_GROUPS) {
    lines.push('', `${group.title}:`);
    for (const [usage, summary] of group.commands) lines.push(`  ${usage.padEnd(width)}${summary}`);
  }
  lines.push(
    '',
    'Options:',
    `  ${'--palace <path>'.padEnd(width)}palace directory (default: PALACE_PALACE_PATH, ~/.palace/config.json, ~/.palace/palace)`,
    `  ${'-V, --version'.padEnd(width)}the version`,
    `  ${'-h, --help'.padEnd(width)}this help`,
    '',
    'Commands that write as an agent take --from-agent/--agent, or PALACE_AGENT_NAME. Reference: docs/cli.md',
    '',
  );
  return lines.join('\n');
}
