// `palace sync` and `palace logstream sync`: the commands and their options only. What they run
// (sync-run.ts: peer transport, protocol schemas, trust) is imported when one runs, so every
// `palace logstream …` call does not pay for loading it.

import type { Command } from 'commander';

import { action } from '../context.js';

function configure(cmd: Command): Command {
  return cmd
    .description(
      'pull from peer hubs now (peers.json, or --peer URL with PALACE_SYNC_PEER_TOKEN); exit 1 if a peer failed',
    )
    .option('--peer <url>', "one peer's base URL instead of peers.json (token from PALACE_SYNC_PEER_TOKEN)")
    .option('--name <name>', 'name for the --peer in the output')
    .option('--direct', 'work on the palace directly even when a hub is running')
    .option('--status', 'print the mesh estate (same as GET /sync/peers) instead of syncing')
    .option('--timeout-ms <ms>', 'per-request timeout when working directly (default 30000)')
    .option('--json', 'machine-readable output')
    .action(action(async (ctx) => (await import('./sync-run.js')).runSync(ctx)));
}

/** Registers `palace sync`, and `palace logstream sync` when the logstream group exists. */
export function registerSync(program: Command): void {
  const sync = configure(program.command('sync'));
  sync
    .command('trust <url>')
    .description("print a peer's replica id, public key and fingerprint to confirm; --pin writes the key into peers.json")
    .option('--pin', 'record the key (and replica id) in peers.json')
    .option('--name <name>', 'the peer entry name (default: the url)')
    .option('--json', 'machine-readable output')
    .action(action(async (ctx, url: string) => (await import('./sync-run.js')).runTrust(ctx, url)));
  sync
    .command('share [wing]')
    .description("replicate a wing's memory (or, with --kg, the knowledge graph) with a peer of peers.json, both ways (--stop: no longer); nothing replicates until shared")
    .requiredOption('--with <peer>', 'the peer (its name or url in peers.json)')
    .option('--kg', 'share the knowledge graph\'s facts with that peer ("kg": true)')
    .option('--stop', 'stop sharing the wing (or the graph) with that peer')
    .option('--json', 'machine-readable output')
    .action(action(async (ctx, wing: string | undefined) => (await import('./sync-run.js')).runShare(ctx, wing)));
  const logstream = program.commands.find((c) => c.name() === 'logstream');
  if (logstream) configure(logstream.command('sync'));
}
