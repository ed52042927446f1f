// Maintenance commands: `palace replay` (journaled memory writes that never reached the index),
// `palace migrate` (the palace's own stores to the current version; or `--from-mempalace <dir>`)
// and `palace migrate-wings` (legacy wing names normalized). None writes behind a live hub's back.

import { resolve } from 'node:path';
import type { Command } from 'commander';

import type { PalaceConfig } from '../../hub/src/config.js';
import { HubError, invalid, toHubError } from '../../hub/src/errors.js';
import { acquireLease, type Lease } from '../../hub/src/lease.js';
import { makeLogger } from '../../hub/src/log.js';
import { Logstream } from '../../hub/src/logstream/logstream.js';
import { replayJournal, type ReplayReport } from '../../hub/src/memory/drawers/journaled-vector-store.js';
import type { Memory } from '../../hub/src/memory/drawers/memory.js';
import { MemoryJournal, readJournalVersion } from '../../hub/src/memory/drawers/memory-journal.js';
import { openMemory } from '../../hub/src/memory/drawers/open-memory.js';
import { importMemPalace, type ImportReport } from '../../hub/src/migrate/mempalace-import.js';
import { findMemPalaceFiles } from '../../hub/src/migrate/mempalace-reader.js';
import { migratePalaceStores, type MigrateReport } from '../../hub/src/migrate/store-versions.js';
import { planWingMoves, type WingMove } from '../../hub/src/migrate/wing-names.js';
import { canonicalPalace } from '../../hub/src/registration.js';
import { action, collect, type CommandContext } from '../context.js';
import { createProgress } from '../progress.js';
import { runTool } from '../tool-runner.js';

/** Takes the palace's writer lease for a maintenance write; a live hub holding it is named, and nothing is written. */
function takeLease(palacePath: string, what: string): Lease {
  try {
    return acquireLease(palacePath, what);
  } catch (err) {
    const e = toHubError(err);
    if (e.code !== 'lease.held') throw e;
    throw new HubError('lease.held', `${e.message}. \`palace ${what}\` writes the palace directly, so it refuses while a hub serves it: stop the hub, run it, start the hub again`, {
      ...(e.data === undefined ? {} : { data: e.data }),
    });
  }
}

/** A progress bar on a terminal; one parseable `progress <phase> <done>/<total>` line per step otherwise. */
function progressReporter(): { update(phase: string, done: number, total: number): void; finish(): void } {
  if (process.stderr.isTTY) {
    const bar = createProgress();
    return { update: (phase, done, total) => bar.update(done, total, `${phase} ${done}/${total}`), finish: () => bar.finish() };
  }
  let last = '';
  return {
    update(phase, done, total) {
      const line = `progress ${phase} ${done}/${total}`;
      if (line !== last) process.stderr.write(line + '\n');
      last = line;
    },
    finish: () => undefined,
  };
}

function replayText(r: ReplayReport): string {
  if (r.pending === 0) return `Nothing to replay: ${r.journal} holds no pending memory writes.`;
  const lines = r.entries.map((e) => `  #${e.seq} ${e.op} ${e.drawer_ids ? e.drawer_ids.join(', ') : JSON.stringify(e.filter)} (written ${e.written_at} by pid ${e.pid})`);
  const head = r.dry_run ? `Would replay ${r.replayed} of ${r.pending} pending memory write(s):` : `Replayed ${r.replayed} of ${r.pending} pending memory write(s):`;
  const tail = r.in_flight > 0 ? [`${r.in_flight} write(s) belong to a live process still applying them; left alone.`] : [];
  return [head, ...lines, ...tail].join('\n');
}

async function replay(ctx: CommandContext): Promise<void> {
  const palacePath = canonicalPalace(ctx.config.palacePath);
  const dryRun = Boolean(ctx.opts.dryRun);
  const empty: ReplayReport = { journal: `${palacePath}/memory-journal.sqlite3`, pending: 0, replayed: 0, in_flight: 0, entries: [], dry_run: dryRun };
  let report: ReplayReport | undefined;
  if (readJournalVersion(palacePath) === null) report = empty;
  else if (dryRun) {
    const journal = MemoryJournal.open(palacePath);
    try {
      report = await replayJournal(journal, undefined, { dryRun: true });
    } finally {
      journal.close();
    }
  } else {
    const lease = takeLease(palacePath, 'replay');
    try {
      // Opening the memory replays its journal (re-embedding only drawers journaled without a usable vector).
      const memory = await openMemory(ctx.config, palacePath, makeLogger('palace:replay'), { onReplay: (r) => (report = r) });
      await memory.close();
    } finally {
      lease.release();
    }
  }
  const result = report ?? empty;
  ctx.out.result(result, () => replayText(result));
}

function migrateText(r: MigrateReport): string {
  const show = (v: string | number | null): string => (v === null ? 'absent' : String(v));
  const lines = r.stores.map(
    (s) => `  ${s.store.padEnd(16)} ${show(s.before)} → ${show(s.after)} (current ${s.current})${s.pending ? (r.dry_run ? '  [would migrate]' : '  [migrated]') : ''}${s.note ? `  ${s.note}` : ''}`,
  );
  const head = r.up_to_date ? `No migration pending: every store of ${r.palace} is at the current version.` : r.dry_run ? `Dry run: migrations pending in ${r.palace}:` : `Migrated ${r.palace}:`;
  return [head, ...lines, ...r.actions.map((a) => `Note: ${a}`)].join('\n');
}

function wingMapOf(values: readonly string[]): Record<string, string> {
  const map: Record<string, string> = {};
  for (const v of values) {
    const at = v.lastIndexOf('=');
    if (at <= 0 || at === v.length - 1) throw invalid('--wing-map', `--wing-map takes old=new, got '${v}'`);
    map[v.slice(0, at)] = v.slice(at + 1);
  }
  return map;
}

function importText(r: ImportReport): string {
  const lines = [`${r.dry_run ? 'Dry run (nothing written): would import' : 'Imported'} MemPalace palace ${r.source} into ${r.palace}`];
  const d = r.drawers;
  if (d)
    lines.push(
      `  drawers    ${d.filed} ${r.dry_run ? 'to file' : 'filed'}, ${d.present} already present, ${d.skipped_secret.length + d.skipped_invalid.length} skipped (of ${d.total})` +
        (d.already_done ? ' [finished by an earlier run]' : d.resumed_after_row > 0 ? ` [resumed after row ${d.resumed_after_row}]` : ''),
    );
  else lines.push('  drawers    no chroma.sqlite3');
  for (const s of d?.skipped_secret ?? []) lines.push(`    skipped ${s.id}: looks like a credential (${s.kind}, line ${s.line}); never filed`);
  for (const s of d?.skipped_invalid ?? []) lines.push(`    skipped ${s.id}: ${s.reason}`);
  if (r.kg) {
    lines.push(`  kg         ${r.kg.entities_added} entities, ${r.kg.triples_added} triples ${r.dry_run ? 'to add' : 'added'}, ${r.kg.triples_present} already present, ${r.kg.skipped.length} skipped`);
    for (const s of r.kg.skipped) lines.push(`    skipped triple ${s.triple_id}: ${s.reason}`);
  } else lines.push('  kg         no knowledge_graph.sqlite3');
  if (r.logstream) {
    const l = r.logstream;
    lines.push(`  logstream  ${l.events_applied} events, ${l.artifacts_added} artifacts ${r.dry_run ? 'to add' : 'added'}; ${l.events_present} events and ${l.artifacts_present} artifacts already present; ${l.skipped.length} skipped`);
    for (const s of l.skipped) lines.push(`    skipped ${s.id}: ${s.reason}`);
  } else lines.push('  logstream  no logstream.sqlite3');
  return lines.join('\n');
}

async function fromMemPalace(ctx: CommandContext, config: Readonly<PalaceConfig>, dir: string): Promise<void> {
  const palacePath = canonicalPalace(config.palacePath);
  const dryRun = Boolean(ctx.opts.dryRun);
  const files = findMemPalaceFiles(resolve(dir));
  const wingMap = wingMapOf((ctx.opts.wingMap as string[] | undefined) ?? []);
  const lease = dryRun ? undefined : takeLease(palacePath, 'migrate');
  const journal = dryRun ? undefined : MemoryJournal.open(palacePath);
  const log = makeLogger('palace:migrate');
  let memory: Memory | undefined;
  let logstream: Logstream | undefined;
  const progress = progressReporter();
  try {
    const report = await importMemPalace(
      files,
      {
        palacePath,
        memory: async () => (memory ??= await openMemory(config, palacePath, log)),
        logstream: () => (logstream ??= Logstream.open(palacePath, { durability: config.durability })),
        journal,
      },
      { dryRun, wingMap, onProgress: (phase, done, total) => progress.update(phase, done, total) },
    );
    progress.finish();
    ctx.out.result(report, () => importText(report));
  } finally {
    await memory?.close();
    logstream?.close();
    journal?.close();
    lease?.release();
  }
}

function wingsText(moves: WingMove[], applied: boolean, moved: number): string {
  if (moves.length === 0) return 'Every wing name is already normalized; nothing to move.';
  const lines = moves.map((m) => `  ${JSON.stringify(m.from)} → ${m.to}  (${m.drawers} drawers${m.merges ? ', merges with an existing wing' : ''})`);
  return [applied ? `Moved ${moved} drawers:` : 'Dry run (nothing moved); run with --apply to move:', ...lines].join('\n');
}

export function registerMigrate(program: Command): void {
  program
    .command('replay')
    .description('re-apply memory writes that were journaled but never indexed (a crash between the two)')
    .option('--dry-run', 'list the pending writes without applying them')
    .option('--json', 'machine-readable output')
    .action(action(async (ctx) => replay(ctx)));

  program
    .command('migrate')
    .description("bring the palace's stores to the current version, or import a MemPalace palace (--from-mempalace)")
    .option('--from-mempalace <dir>', 'import a Python MemPalace palace directory (chroma.sqlite3, knowledge_graph.sqlite3, logstream.sqlite3)')
    .option('--wing-map <old=new>', 'with --from-mempalace: file drawers of wing old under new (repeatable)', collect)
    .option('--dry-run', 'report what would change; write nothing')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx) => {
        if (typeof ctx.opts.fromMempalace === 'string') return fromMemPalace(ctx, ctx.config, ctx.opts.fromMempalace);
        if (ctx.opts.wingMap) throw invalid('--wing-map', '--wing-map goes with --from-mempalace');
        const palacePath = canonicalPalace(ctx.config.palacePath);
        const dryRun = Boolean(ctx.opts.dryRun);
        const lease = dryRun ? undefined : takeLease(palacePath, 'migrate');
        try {
          const report = await migratePalaceStores(ctx.config, palacePath, makeLogger('palace:migrate'), dryRun);
          ctx.out.result(report, () => migrateText(report));
        } finally {
          lease?.release();
        }
      }),
    );

  program
    .command('migrate-wings')
    .description('normalize legacy wing names (wing_<name>, mixed case, spaces) to lower-case-with-dashes; dry run unless --apply')
    .option('--dry-run', 'show the mapping only (the default)')
    .option('--apply', 'move the drawers (content never changes)')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx) => {
        const apply = Boolean(ctx.opts.apply) && !ctx.opts.dryRun;
        const palacePath = canonicalPalace(ctx.config.palacePath);
        if (!apply) {
          const { wings } = await runTool(ctx.config, 'palace_list_wings', {});
          const moves = planWingMoves(wings);
          ctx.out.result({ palace: palacePath, applied: false, moves, moved: 0 }, () => wingsText(moves, false, 0));
          return;
        }
        const lease = takeLease(palacePath, 'migrate-wings');
        try {
          const memory = await openMemory(ctx.config, palacePath, makeLogger('palace:migrate-wings'));
          try {
            const moves = planWingMoves((await memory.listWings()).wings);
            let moved = 0;
            for (const m of moves) moved += await memory.patchDrawers({ wing: m.from }, { wing: m.to });
            ctx.out.result({ palace: palacePath, applied: true, moves, moved }, () => wingsText(moves, true, moved));
          } finally {
            await memory.close();
          }
        } finally {
          lease.release();
        }
      }),
    );
}
