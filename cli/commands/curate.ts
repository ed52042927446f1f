// Curation commands: checkpoint, bulk-move, purge, prune, rename-wing, export and import. Each runs
// palace tools through the live hub when there is one (so the hub stays the only writer).
//
// Decisions: bulk-move, purge and prune print a preview unless told to act. bulk-move acts with
// --apply, and asks on a terminal unless --yes; unattended (no TTY) --apply without --yes exits 2
// before any tool runs, so nothing changes. purge and prune act with --confirm (scriptable, no
// prompt), like `hallway delete`. checkpoint and import exit 2 when any row was refused (the rest
// is still filed) so scripts notice; export writes into a new or empty directory only.

import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import type { Command } from 'commander';

import { invalid } from '../../hub/src/errors.js';
import { action, collect, type CommandContext } from '../context.js';
import { EXPORT_FILES, emptyOutputDir, parseRecords, writeJsonl, writeMarkdown } from '../export-files.js';
import { EXIT } from '../output.js';
import { readText } from '../read-input.js';
import { flag, type CliArgs } from '../tool-args.js';
import type { ResultOf, ToolName } from '../../hub/src/mcp/contract.js';
import { runTool } from '../tool-runner.js';
import { askYesNo } from '../ask.js';

const IMPORT_BATCH = 500;
const IMPORT_BATCH_BYTES = 4 * 1024 * 1024;
const EXPORT_PAGE = 1000;

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

const call = <N extends ToolName>(ctx: CommandContext, name: N, args: CliArgs<N>) => runTool(ctx.config, name, args);

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function wholeNumber(flag: string, v: unknown): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw invalid(flag, `${flag} must be a whole number ≥ 1`);
  return n;
}

type BulkMove = {
  dry_run: boolean;
  matched: number;
  already_there: number;
  drawers_to_move: number;
  rows_to_move: number;
  drawers: Array<{ drawer_id: string; from: { wing: string; room: string }; to: { wing: string; room: string } }>;
  listed_all: boolean;
};

function moveText(r: BulkMove): string {
  const verb = r.dry_run ? 'Would move' : 'Moved';
  return [
    `${verb} ${r.drawers_to_move} drawer${r.drawers_to_move === 1 ? '' : 's'} (${plural(r.rows_to_move, 'row')}); ${r.matched} matched, ${r.already_there} already there.`,
    ...r.drawers.map((d) => `  ${d.drawer_id}  ${d.from.wing}/${d.from.room} -> ${d.to.wing}/${d.to.room}`),
    ...(r.listed_all ? [] : ['  …']),
    ...(r.dry_run && r.drawers_to_move > 0 ? ['(dry run: nothing moved; add --apply to move)'] : []),
  ].join('\n');
}

function registerCheckpoint(program: Command): void {
  program
    .command('checkpoint')
    .description('file several memories (and a diary entry) in one call, with duplicate checks')
    .requiredOption('--items-file <path>', "JSON array or JSONL of {wing, room, content, tags?, source_file?}; '-' for stdin")
    .option('--dry-run', 'check everything, write nothing')
    .option('--agent <name>', 'who files them, and whose diary (default: PALACE_AGENT_NAME)')
    .option('--diary <text>', 'also write this diary entry')
    .option('--topic <topic>', 'diary topic (default general)')
    .option('--threshold <x>', 'duplicate similarity threshold (default 0.9)')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx) => {
        const o = ctx.opts;
        const items = parseRecords(readText(String(o.itemsFile), '--items-file'), '--items-file');
        const threshold = o.threshold === undefined ? undefined : Number(o.threshold);
        if (threshold !== undefined && !(threshold > 0 && threshold <= 1)) throw invalid('--threshold', '--threshold must be a number in (0, 1]');
        const agent = str(o.agent) ?? ctx.config.agentName;
        const r = await call(ctx, 'palace_checkpoint', {
          items: flag(items),
          ...(o.diary === undefined ? {} : { diary: flag({ agent, entry: o.diary, topic: o.topic }) }),
          dedup_threshold: threshold,
          dry_run: Boolean(o.dryRun),
          added_by: agent ?? 'cli',
        });
        ctx.out.result(r, () =>
          [
            `${r.dry_run ? 'Would file' : 'Filed'} ${r.added.length}, ${r.duplicates.length} duplicate${r.duplicates.length === 1 ? '' : 's'}, ${r.errors.length} error${r.errors.length === 1 ? '' : 's'}${r.dry_run ? ' (dry run: nothing written)' : ''}.`,
            ...r.added.map((a) => `  [${a.index}] ${r.dry_run ? 'would file' : 'filed'} ${a.drawer_id}  ${a.wing}/${a.room}`),
            ...r.duplicates.map((d) => `  [${d.index}] duplicate of ${d.duplicate_of} (similarity ${d.similarity}${d.within_call ? ', same checkpoint' : ''})`),
            ...r.errors.map((e) => `  [${e.index}] error ${e.code}: ${e.message}`),
            ...(r.diary ? [r.diary.error ? `  diary: error: ${r.diary.error.message}` : `  diary: ${r.diary.entry_id ?? 'would write'}`] : []),
          ].join('\n'),
        );
        return r.errors.length > 0 || r.diary?.error ? EXIT.usage : EXIT.ok;
      }),
    );
}

function registerBulkMove(program: Command): void {
  program
    .command('bulk-move [drawer_ids...]')
    .description('move every matching drawer to another wing and/or room (dry run unless --apply; content never changes)')
    .option('--from-wing <wing>', 'drawers in this wing')
    .option('--from-room <room>', 'drawers in this room')
    .option('--source-file <path>', 'drawers mined from this exact file')
    .option('--tag <tag>', 'drawers with this tag; repeatable (any of)', collect)
    .option('--to-wing <wing>', 'target wing')
    .option('--to-room <room>', 'target room')
    .option('--apply', 'perform the move (default: only show what would move)')
    .option('--yes', 'do not ask for confirmation (needed for --apply without a terminal)')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx, ids: string[]) => {
        const o = ctx.opts;
        const args = {
          from_wing: str(o.fromWing),
          from_room: str(o.fromRoom),
          source_file: str(o.sourceFile),
          tags: o.tag as string[] | undefined, // commander's collect(): a list of strings
          ids: ids.length > 0 ? ids : undefined,
          to_wing: str(o.toWing),
          to_room: str(o.toRoom),
        };
        if (!args.from_wing && !args.from_room && !args.source_file && !args.tags && !args.ids)
          throw invalid('--from-wing', 'select drawers with --from-wing, --from-room, --source-file, --tag or drawer ids');
        if (!args.to_wing && !args.to_room) throw invalid('--to-wing', 'give --to-wing and/or --to-room');
        const interactive = Boolean(process.stdin.isTTY && process.stderr.isTTY);
        if (o.apply && !o.yes && !interactive)
          throw invalid('--yes', 'bulk-move --apply without a terminal needs --yes to confirm; nothing was moved');
        if (o.apply && !o.yes) {
          const plan = await call(ctx, 'palace_bulk_move', { ...args, dry_run: true });
          ctx.out.note(moveText(plan));
          if (plan.drawers_to_move === 0) {
            ctx.out.result(plan, () => 'Nothing to move.');
            return EXIT.ok;
          }
          if (!(await askYesNo(`Move ${plan.drawers_to_move} drawer${plan.drawers_to_move === 1 ? '' : 's'}?`))) {
            ctx.out.note('Cancelled; nothing was moved.');
            return EXIT.error;
          }
        }
        const r = await call(ctx, 'palace_bulk_move', { ...args, dry_run: !o.apply });
        ctx.out.result(r, () => moveText(r));
        return EXIT.ok;
      }),
    );
}

function registerPurgeAndPrune(program: Command): void {
  program
    .command('purge')
    .description('delete every drawer from a source file and/or in a wing or room (dry run unless --confirm)')
    .option('--source-file <path>', 'drawers mined from this exact file')
    .option('--wing <wing>', 'drawers in this wing')
    .option('--room <room>', 'drawers in this room')
    .option('--confirm', 'delete them (default: only show what would go)')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx) => {
        const o = ctx.opts;
        const args = { source_file: str(o.sourceFile), wing: str(o.wing), room: str(o.room) };
        if (!args.source_file && !args.wing && !args.room) throw invalid('--source-file', 'give --source-file, --wing and/or --room (an unfiltered purge is refused)');
        const r = await call(ctx, 'palace_purge', { ...args, dry_run: !o.confirm });
        ctx.out.result(r, () =>
          [
            `${r.dry_run ? 'Would delete' : 'Deleted'} ${r.drawers} drawer${r.drawers === 1 ? '' : 's'} (${plural(r.rows, 'row')}).`,
            ...r.sample.map((d) => `  ${d.drawer_id}  ${d.wing}/${d.room}${d.source_file ? `  ${d.source_file}` : ''}`),
            ...(r.listed_all ? [] : ['  …']),
            ...(r.dry_run && r.drawers > 0 ? ['(dry run: nothing deleted; add --confirm to delete)'] : []),
          ].join('\n'),
        );
      }),
    );

  program
    .command('prune')
    .description('delete drawers filed more than N days ago (dry run unless --confirm; no parseable filed_at = never pruned)')
    .requiredOption('--stale-days <n>', 'age in days')
    .option('--wing <wing>', 'only this wing')
    .option('--room <room>', 'only this room')
    .option('--confirm', 'delete them (default: only show what would go)')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx) => {
        const o = ctx.opts;
        const r = await call(ctx, 'palace_prune', {
          stale_days: flag(wholeNumber('--stale-days', o.staleDays)),
          wing: str(o.wing),
          room: str(o.room),
          dry_run: !o.confirm,
        });
        ctx.out.result(r, () =>
          [
            `${r.dry_run ? 'Would prune' : 'Pruned'} ${r.stale} of ${r.scanned} drawers filed before ${r.cutoff}.`,
            ...r.drawers.map((d) => `  ${d.drawer_id}  ${d.wing}/${d.room}  filed ${d.filed_at}`),
            ...(r.skipped_unparseable > 0 ? [`Skipped ${r.skipped_unparseable} with no parseable filed_at (never pruned):`, ...r.skipped.map((s) => `  ${s.drawer_id}  filed_at ${JSON.stringify(s.filed_at)}`)] : []),
            ...(r.dry_run && r.stale > 0 ? ['(dry run: nothing deleted; add --confirm to prune)'] : []),
          ].join('\n'),
        );
      }),
    );
}

function registerRenameWing(program: Command): void {
  program
    .command('rename-wing <wing> <new_wing>')
    .description('move every drawer and declared room of a wing to a new name (content never changes)')
    .option('--dry-run', 'only show what would move')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx, wing: string, newWing: string) => {
        const r = await call(ctx, 'palace_rename_wing', { wing, new_wing: newWing, dry_run: Boolean(ctx.opts.dryRun) });
        ctx.out.result(r, () =>
          [
            `${r.dry_run ? 'Would move' : 'Moved'} ${r.drawers} drawer${r.drawers === 1 ? '' : 's'} (${plural(r.rows, 'row')}) from ${wing} to ${newWing}${r.merged_into_existing ? ` (merged into the existing ${newWing})` : ''}.`,
            ...(r.declared_rooms.length ? [`Declared rooms carried over: ${r.declared_rooms.join(', ')}`] : []),
            ...(r.note ? [r.note] : []),
          ].join('\n'),
        );
      }),
    );
}

/** Import calls of at most IMPORT_BATCH rows and about IMPORT_BATCH_BYTES of JSON (the hub caps a request at 16 MiB). */
function importBatches(list: readonly unknown[]): Array<{ start: number; rows: unknown[] }> {
  const out: Array<{ start: number; rows: unknown[] }> = [];
  let current: { start: number; rows: unknown[] } = { start: 0, rows: [] };
  let bytes = 0;
  list.forEach((value, i) => {
    const size = Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
    if (current.rows.length > 0 && (current.rows.length >= IMPORT_BATCH || bytes + size > IMPORT_BATCH_BYTES)) {
      out.push(current);
      current = { start: i, rows: [] };
      bytes = 0;
    }
    current.rows.push(value);
    bytes += size;
  });
  if (current.rows.length > 0) out.push(current);
  return out;
}

type ExportPage = ResultOf<'palace_export'>;

/** Every page of one export part: its rows (drawers or KG facts) and the first page (the embedder, the totals). */
async function pages(ctx: CommandContext, args: CliArgs<'palace_export'>): Promise<{ rows: ExportPage[]; first: ExportPage | undefined }> {
  const rows: ExportPage[] = [];
  let offset: number | null = 0;
  let first: ExportPage | undefined;
  while (offset !== null) {
    const page: ExportPage = await call(ctx, 'palace_export', { ...args, offset, limit: EXPORT_PAGE });
    first ??= page;
    rows.push(page);
    offset = page.next_offset;
  }
  return { rows, first };
}

function registerExportImport(program: Command): void {
  program
    .command('export <out_dir>')
    .description('write the palace as browsable Markdown (index.md, <wing>/<room>.md) and loadable JSONL (drawers.jsonl, kg_facts.jsonl)')
    .option('--wing <wing>', 'only this wing (KG facts are palace-wide and then left out)')
    .option('--format <format>', 'markdown, jsonl or both', 'both')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx, outDir: string) => {
        const o = ctx.opts;
        const format = String(o.format);
        if (!['markdown', 'jsonl', 'both'].includes(format)) throw invalid('--format', '--format must be markdown, jsonl or both');
        const dir = resolve(outDir);
        emptyOutputDir(dir);
        const wing = str(o.wing);
        const drawerPages = await pages(ctx, { part: 'drawers', wing });
        const drawers = { ...drawerPages, rows: drawerPages.rows.flatMap((p) => p.drawers ?? []) };
        const facts = { rows: wing ? [] : (await pages(ctx, { part: 'kg' })).rows.flatMap((p) => p.facts ?? []) };
        const exportedAt = new Date().toISOString();
        const files: string[] = [EXPORT_FILES.manifest];
        if (format !== 'markdown') {
          writeJsonl(join(dir, EXPORT_FILES.drawers), drawers.rows);
          files.push(EXPORT_FILES.drawers);
          if (!wing) {
            writeJsonl(join(dir, EXPORT_FILES.kg), facts.rows);
            files.push(EXPORT_FILES.kg);
          }
        }
        let md: { wings: number; rooms: number } | undefined;
        if (format !== 'jsonl') {
          const written = writeMarkdown(dir, drawers.rows, { exportedAt, palace: ctx.config.palacePath });
          md = { wings: written.wings, rooms: written.rooms };
          files.push(EXPORT_FILES.index, ...written.files);
        }
        const manifest = {
          format: 'palace-export/1',
          exported_at: exportedAt,
          palace: ctx.config.palacePath,
          wing: wing ?? null,
          embedder: drawers.first?.embedder ?? null,
          drawer_rows: drawers.rows.length,
          kg_facts: facts.rows.length,
        };
        writeFileSync(join(dir, EXPORT_FILES.manifest), JSON.stringify(manifest, null, 2) + '\n');
        const r = { out_dir: dir, ...manifest, output_format: format, ...(md ? { markdown: md } : {}), files };
        ctx.out.result(r, () =>
          `Exported ${drawers.rows.length} drawer rows${wing ? ` of wing ${wing}` : ` and ${facts.rows.length} KG facts`} to ${dir}${md ? ` (${md.rooms} room files in ${md.wings} wings)` : ''}.`,
        );
      }),
    );

  program
    .command('import <path>')
    .description('load an export (a directory, or a drawers/kg_facts .jsonl file) into this palace; re-import changes nothing')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx, path: string) => {
        const target = resolve(path);
        if (!existsSync(target)) throw invalid('path', `${target} does not exist`);
        const sources = statSync(target).isDirectory()
          ? [EXPORT_FILES.drawers, EXPORT_FILES.kg].map((f) => join(target, f)).filter((f) => existsSync(f))
          : [target];
        if (sources.length === 0) throw invalid('path', `${target} holds no ${EXPORT_FILES.drawers} or ${EXPORT_FILES.kg}`);
        const records = sources.flatMap((f) => parseRecords(readText(f, 'path'), f));
        const isFact = (v: unknown): boolean => !!v && typeof v === 'object' && 'triple_id' in v;
        const drawers = records.filter((v) => !isFact(v));
        const facts = records.filter(isFact);
        const total = { drawers: { imported: 0, skipped: 0, refused: [] as unknown[] }, kg_facts: { imported: 0, skipped: 0, refused: [] as unknown[] } };
        const send = async (key: 'drawers' | 'kg_facts', list: unknown[]): Promise<void> => {
          for (const { start, rows } of importBatches(list)) {
            const r = await call(ctx, 'palace_import', { [key]: rows });
            total[key].imported += r[key].imported;
            total[key].skipped += r[key].skipped;
            total[key].refused.push(...r[key].refused.map((x) => ({ ...x, index: Number(x.index) + start })));
          }
        };
        await send('drawers', drawers);
        await send('kg_facts', facts);
        const r = { path: target, ...total };
        ctx.out.result(r, () =>
          [
            `Drawer rows: ${total.drawers.imported} imported, ${total.drawers.skipped} already present, ${total.drawers.refused.length} refused.`,
            `KG facts: ${total.kg_facts.imported} imported, ${total.kg_facts.skipped} already present, ${total.kg_facts.refused.length} refused.`,
            ...[...total.drawers.refused, ...total.kg_facts.refused].map((x) => {
              const e = x as { index: number; id: string | null; message: string };
              return `  refused #${e.index}${e.id ? ` (${e.id})` : ''}: ${e.message}`;
            }),
          ].join('\n'),
        );
        return total.drawers.refused.length + total.kg_facts.refused.length > 0 ? EXIT.usage : EXIT.ok;
      }),
    );
}

export function registerCurate(program: Command): void {
  registerCheckpoint(program);
  registerBulkMove(program);
  registerPurgeAndPrune(program);
  registerRenameWing(program);
  registerExportImport(program);
}
