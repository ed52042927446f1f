// `palace repair --mode check|rebuild` and `palace repair-status`: checks the vector index against
// the verbatim drawers and rebuilds it from them (the path after `set-embedder --force` too).
// `palace repair --tasks` does the same for the logstream's task projection and reservations table.

import type { Command } from 'commander';

import { HubError, invalid } from '../../hub/src/errors.js';
import { chooseEmbedder, readEmbedderRecord } from '../../hub/src/embed/select.js';
import { createWorkerEmbedder, embedPoolOptions } from '../../hub/src/embed/worker-embedder.js';
import { leaseHolder } from '../../hub/src/lease.js';
import { makeLogger } from '../../hub/src/log.js';
import { reembedPalace } from '../../hub/src/memory/curation/reembed.js';
import { canonicalPalace } from '../../hub/src/registration.js';
import { action, withLogstream, type CommandContext } from '../context.js';
import { createProgress } from '../progress.js';
import { runTool } from '../tool-runner.js';

interface RepairStatus {
  palace: string;
  drawers: number;
  embedder: { recorded: string | null; in_use: string };
  by_embedder: Record<string, number>;
  stale_vectors: number;
  manifest: { files: number; drawers: number };
  ok: boolean;
  hint?: string;
}

function statusText(s: RepairStatus): string {
  return [
    `palace    ${s.palace}`,
    `drawers   ${s.drawers} (${Object.entries(s.by_embedder).map(([k, n]) => `${n} by ${k}`).join(', ') || 'none'})`,
    `embedder  recorded ${s.embedder.recorded ?? 'none'}, in use ${s.embedder.in_use}`,
    `mined     ${s.manifest.files} files, ${s.manifest.drawers} drawers`,
    s.ok ? 'index     ok' : `index     ${s.stale_vectors} drawers need new vectors${s.hint ? `: ${s.hint}` : ''}`,
  ].join('\n');
}

async function rebuild(ctx: CommandContext): Promise<void> {
  const palacePath = canonicalPalace(ctx.config.palacePath);
  const holder = leaseHolder(palacePath);
  if (holder && holder.pid !== process.pid)
    throw new HubError('lease.held', `a hub (pid ${holder.pid}${holder.address ? ` at ${holder.address}` : ''}) serves this palace; stop it before rebuilding the index`);
  const record = readEmbedderRecord(palacePath);
  const { spec } = chooseEmbedder(ctx.config, palacePath);
  const embedder = await createWorkerEmbedder(spec, embedPoolOptions(ctx.config));
  try {
    const info = embedder.info();
    const progress = createProgress();
    const drawers = await reembedPalace(palacePath, record?.dimensions ?? info.dimensions, embedder, makeLogger('palace:repair'), (p) =>
      progress.update(p.done, p.total, `re-embedding drawers ${p.done}/${p.total}`),
    );
    progress.finish();
    const result = { palace: palacePath, mode: 'rebuild', reembedded: drawers, embedder: `${info.model}/${info.dimensions}` };
    ctx.out.result(result, () => `Rebuilt the vector index of ${palacePath}: ${drawers} drawers re-embedded with ${info.model} (${info.dimensions}-d).`);
  } finally {
    await embedder.close();
  }
}

/** Checks (and with rebuild, first rebuilds) the task projection against a full scan of the log. */
async function repairTasks(ctx: CommandContext, mode: 'check' | 'rebuild'): Promise<number> {
  const result = await withLogstream(ctx, async (ls) => {
    if (mode === 'rebuild') await ls.rebuildTasks();
    const check = await ls.verifyTasks();
    const routesOk = check.routes.missing === 0 && check.routes.extra === 0;
    const ok = check.differences.length === 0 && check.count_drift.length === 0 && check.reservations.differences.length === 0 && routesOk;
    return {
      palace: ctx.config.palacePath,
      mode,
      tasks: check.tasks,
      differences: check.differences,
      count_drift: check.count_drift,
      routes: check.routes,
      reservations: check.reservations,
      ok,
    };
  });
  const reservationsOk = result.reservations.differences.length === 0;
  ctx.out.result(result, () =>
    [
      `${mode === 'rebuild' ? 'Rebuilt the task projection, routing tables and reservations table; ' : ''}${result.tasks} task(s) and ${result.reservations.held} unreleased reservation(s) checked against a full scan of the log`,
      ...(result.differences.length === 0 && result.count_drift.length === 0
        ? ['tasks     ok']
        : [
            `tasks     ${result.differences.length} difference(s), ${result.count_drift.length} count(s) off; run palace repair --tasks --mode rebuild`,
            ...result.differences.slice(0, 20).map((d) => `  ${d.problem.padEnd(9)} ${d.correlation_id}`),
            ...result.count_drift.map((d) => `  count     ${d}`),
          ]),
      ...(result.routes.missing === 0 && result.routes.extra === 0
        ? ['routes    ok']
        : [
            `routes    ${result.routes.missing} row(s) missing, ${result.routes.extra} extra; run palace repair --tasks --mode rebuild`,
            ...result.routes.differences.slice(0, 20).map((d) => `  ${d.problem.padEnd(9)} ${d.route} ${d.value} seq ${d.seq}`),
          ]),
      ...(reservationsOk
        ? ['reservations ok']
        : [
            `reservations ${result.reservations.differences.length} difference(s); run palace repair --tasks --mode rebuild`,
            ...result.reservations.differences.slice(0, 20).map((d) => `  ${d.problem.padEnd(15)} ${d.reservation_id}`),
          ]),
    ].join('\n'),
  );
  return result.ok ? 0 : 1;
}

export function registerRepair(program: Command): void {
  program
    .command('repair')
    .description('check (default) or rebuild the vector index from the verbatim drawers (--tasks: the task projection from the log)')
    .option('--mode <mode>', 'check or rebuild', 'check')
    .option('--tasks', 'the logstream task projection, routing and reservations tables instead: compare them with a full scan of the log (rebuild: build them again first)')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx) => {
        const mode = String(ctx.opts.mode);
        if (mode !== 'check' && mode !== 'rebuild') throw invalid('--mode', '--mode must be check or rebuild');
        if (ctx.opts.tasks) return repairTasks(ctx, mode);
        if (mode === 'rebuild') return rebuild(ctx);
        const s = await runTool(ctx.config, 'palace_repair_status', {});
        ctx.out.result(s, () => statusText(s));
        return s.ok ? 0 : 1;
      }),
    );
  program
    .command('repair-status')
    .description('read-only: the vector index against the drawers and the mined-files manifest')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx) => {
        const s = await runTool(ctx.config, 'palace_repair_status', {});
        ctx.out.result(s, () => statusText(s));
      }),
    );
}
