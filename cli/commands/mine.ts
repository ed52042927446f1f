// Mining commands: `mine` (project files, transcripts, documents, source adapters; --watch keeps a
// project current), `mined`, `sweep` (transcripts not yet mined) and `split` (mega-transcripts).
// Mining runs through the live hub when there is one, so the hub stays the only writer.

import { resolve, sep } from 'node:path';

import type { Command } from 'commander';
import { watch } from 'chokidar';

import { HubError, invalid } from '../../hub/src/errors.js';
import { ADAPTERS, resolveAdapter } from '../../hub/src/mine/adapters.js';
import { mineSummary, type MineReport } from '../../hub/src/mine/miner.js';
import { splitTranscripts } from '../../hub/src/mine/split.js';
import { SKIP_DIRS } from '../../hub/src/mine/walk.js';
import { action, type CommandContext } from '../context.js';
import { createProgress } from '../progress.js';
import { flag } from '../tool-args.js';
import { runTool } from '../tool-runner.js';

function wholeNumber(value: unknown, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw invalid(flag, `${flag} must be a whole number ≥ 0`);
  return n;
}

/** A mine's report with its wall time, for the throughput in the summary. */
interface Timed {
  report: MineReport;
  seconds: number;
}

/**
 * Runs one mine. On a terminal (stderr a TTY) a single updating line shows files, drawers, throughput
 * and ETA; otherwise nothing is written until the summary, so scripted output stays parseable.
 */
async function mineOnce(ctx: CommandContext, args: Record<string, unknown>, quiet = false): Promise<Timed> {
  const progress = createProgress();
  const started = Date.now();
  try {
    const result = await runTool(ctx.config, 'palace_mine', args, {
      onProgress: (done, total, message) => {
        if (quiet) return;
        const secs = Math.max(0.001, (Date.now() - started) / 1000);
        const drawers = Number(/^(\d+) drawers/.exec(message ?? '')?.[1] ?? 0);
        progress.update(done, total, `${done}/${total ?? '?'} files  ${drawers} drawers  ${(done / secs).toFixed(1)} files/s  ${(drawers / secs).toFixed(1)} drawers/s`);
      },
    });
    // Only a background mine (never asked for here) answers {accepted, job}.
    if ('accepted' in result) throw new HubError('internal', `the hub queued the mine as job ${result.job.id} instead of running it`);
    return { report: result, seconds: (Date.now() - started) / 1000 };
  } finally {
    progress.finish();
  }
}

/** The last line of a text summary: stable `key=value` pairs for scripts (and the throughput for people). */
function summaryFields(r: MineReport, seconds: number): string {
  const rate = (n: number): string => (seconds > 0 ? (n / seconds).toFixed(1) : '0.0');
  const fields: Array<[string, string | number]> = [
    ['files_seen', r.files_seen],
    ['files_mined', r.files_mined],
    ['files_unchanged', r.files_unchanged],
    ['files_skipped', r.files_skipped],
    ['files_failed', r.errors.length],
    ['drawers_filed', r.drawers_filed],
    ['drawers_removed', r.drawers_removed],
    ['seconds', seconds.toFixed(1)],
    ['files_per_s', rate(r.files_mined)],
    ['drawers_per_s', rate(r.drawers_filed)],
  ];
  return `summary: ${fields.map(([k, v]) => `${k}=${v}`).join(' ')}`;
}

function reportText({ report: r, seconds }: Timed): string {
  const lines = [mineSummary(r)];
  if (r.files) for (const f of r.files) lines.push(`  ${f.file}\t${f.room}\t${f.chunks} chunks`);
  for (const e of r.errors) lines.push(`  error: ${e.file}: ${e.error}`);
  lines.push(summaryFields(r, seconds));
  return lines.join('\n');
}

function mineArgs(ctx: CommandContext, path: string | undefined): Record<string, unknown> {
  const o = ctx.opts;
  const adapter = typeof o.source === 'string' ? resolveAdapter(o.source) : undefined;
  if (adapter && o.mode !== undefined) throw invalid('--mode', 'give --mode or --source, not both');
  if (o.mode !== undefined && !['projects', 'convos', 'extract'].includes(String(o.mode))) throw invalid('--mode', '--mode must be projects, convos or extract');
  if (!path && !adapter?.defaultRoot) throw invalid('dir', 'give the directory or file to mine');
  return {
    ...(path ? { source: resolve(path) } : {}),
    ...(adapter ? { adapter: adapter.name } : { mode: o.mode ?? 'projects' }),
    wing: o.wing,
    room: o.room,
    dry_run: Boolean(o.dryRun),
    prune: Boolean(o.prune),
    force: Boolean(o.force),
    gitignore: o.gitignore !== false,
    limit: wholeNumber(o.limit, '--limit'),
    added_by: o.addedBy ?? ctx.config.agentName,
  };
}

/** Keeps a project's drawers current: an initial mine, then a cheap re-mine after each burst of changes. */
async function watchMine(ctx: CommandContext, args: Record<string, unknown>): Promise<void> {
  const root = String(args.source);
  const first = await mineOnce(ctx, args);
  ctx.out.line(ctx.out.json ? JSON.stringify(first.report) : reportText(first));
  ctx.out.note(`watching ${root} (Ctrl-C to stop)`);
  const watcher = watch(root, {
    ignoreInitial: true,
    ignored: (path: string) => path.split(sep).some((part) => SKIP_DIRS.has(part)),
  });
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const again = (): void => {
    running = running.then(async () => {
      try {
        const timed = await mineOnce(ctx, { ...args, prune: true }, true);
        const r = timed.report;
        if (r.files_mined > 0 || r.files_pruned > 0) ctx.out.line(ctx.out.json ? JSON.stringify(r) : reportText(timed));
      } catch (err) {
        ctx.out.warn(`re-mine failed: ${(err as Error).message}`);
      }
    });
  };
  watcher.on('all', () => {
    clearTimeout(timer);
    timer = setTimeout(again, 400);
  });
  await new Promise<void>((done) => {
    const stop = (): void => {
      clearTimeout(timer);
      void watcher.close().then(() => running).then(done);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

export function registerMine(program: Command): void {
  program
    .command('mine [dir]')
    .description('mine a project (default), transcripts (--mode convos), documents (--mode extract) or a source adapter into drawers')
    .option('--mode <mode>', 'projects (default), convos or extract')
    .option('--source <adapter>', `a source adapter: ${ADAPTERS.map((a) => a.name).join(', ')}`)
    .option('--wing <wing>', 'wing for the drawers (default: the folder name)')
    .option('--room <room>', 'room for every drawer (default: per folder / transcript format)')
    .option('--dry-run', 'report what would be filed; write nothing')
    .option('--prune', 'remove drawers of mined files that are gone or now ignored (kept otherwise)')
    .option('--force', 're-mine unchanged files too')
    .option('--no-gitignore', 'do not respect .gitignore files')
    .option('--limit <n>', 'mine at most n files')
    .option('--added-by <agent>', 'who files the drawers (default: PALACE_AGENT_NAME or palace-mine)')
    .option('--watch', 'keep mining as files change (Ctrl-C to stop)')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx, dir: string | undefined) => {
        const args = mineArgs(ctx, dir);
        if (ctx.opts.watch) {
          if (!args.source) throw invalid('dir', '--watch needs a directory');
          return watchMine(ctx, args);
        }
        const timed = await mineOnce(ctx, args);
        ctx.out.result(timed.report, () => reportText(timed));
        return timed.report.errors.length > 0 ? 1 : 0;
      }),
    );

  program
    .command('mined')
    .description('what has been mined: from where, into which wing, how many drawers, when')
    .option('--wing <wing>', 'only this wing')
    .option('--source <path>', 'only files under this path')
    .option('--files', 'list every file, not only the per-source totals')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx) => {
        const o = ctx.opts;
        const r = await runTool(ctx.config, 'palace_mined', {
          wing: flag(o.wing),
          source: typeof o.source === 'string' ? resolve(o.source) : undefined,
          limit: o.files ? 10_000 : 0,
        });
        ctx.out.result(r, () => {
          if (r.sources.length === 0) return 'Nothing mined yet.';
          const lines = r.sources.map((s) => `${s.root}  → ${s.wing} (${s.mode}): ${s.files} files, ${s.drawers} drawers, last ${s.last_mined_at}`);
          for (const f of r.files) lines.push(`  ${f.source_file}  ${f.wing}/${f.room}  ${f.drawers} drawers  ${f.mined_at}`);
          for (const j of r.jobs ?? []) lines.push(`job ${j.id} ${j.state}: ${j.source}${j.error ? ` (${j.error.message})` : ''}`);
          lines.push(`${r.total_files} files, ${r.total_drawers} drawers in all`);
          return lines.join('\n');
        });
      }),
    );

  program
    .command('sweep [dir]')
    .description('mine transcripts not yet mined (a directory, else the Claude Code, Codex and Gemini CLI session folders)')
    .option('--wing <wing>', 'wing for the drawers')
    .option('--dry-run', 'report what would be filed; write nothing')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx, dir: string | undefined) => {
        const o = ctx.opts;
        const base = { wing: o.wing, dry_run: Boolean(o.dryRun), added_by: ctx.config.agentName };
        const runs: Array<Record<string, unknown>> = dir
          ? [{ ...base, source: resolve(dir), mode: 'convos' }]
          : ['claude-code', 'codex', 'gemini'].map((adapter) => ({ ...base, adapter }));
        const reports: Timed[] = [];
        for (const args of runs) {
          try {
            reports.push(await mineOnce(ctx, args));
          } catch (err) {
            // A harness that is not installed has no session folder: nothing to sweep there.
            if (!dir && (err as { code?: string }).code === 'mine.source_missing') continue;
            throw err;
          }
        }
        ctx.out.result({ reports: reports.map((t) => t.report) }, () => (reports.length === 0 ? 'No transcript folders found.' : reports.map(reportText).join('\n')));
        return reports.some((t) => t.report.errors.length > 0) ? 1 : 0;
      }),
    );

  program
    .command('split <dir>')
    .description('split concatenated transcript files into one file per session')
    .option('--output-dir <dir>', 'write the sessions here (default: beside each file; the original becomes *.mega_backup)')
    .option('--min-sessions <n>', 'only split files holding at least n sessions (default 2)')
    .option('--dry-run', 'report what would be split; write nothing')
    .option('--json', 'machine-readable output')
    .action(
      action((ctx, dir: string) => {
        const o = ctx.opts;
        const r = splitTranscripts(resolve(dir), {
          ...(typeof o.outputDir === 'string' ? { outputDir: resolve(o.outputDir) } : {}),
          minSessions: wholeNumber(o.minSessions, '--min-sessions') ?? 2,
          dryRun: Boolean(o.dryRun),
        });
        ctx.out.result(r, () =>
          r.files.length === 0
            ? `No file in ${dir} holds ${r.min_sessions} or more sessions.`
            : r.files.map((f) => `${r.dry_run ? 'would split' : 'split'} ${f.file} into ${f.sessions.length} sessions${f.backup ? ` (original kept as ${f.backup})` : ''}`).join('\n'),
        );
      }),
    );
}
