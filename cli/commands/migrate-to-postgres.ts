// `palace migrate-to-postgres`: copies the palace's drawers and knowledge graph into Postgres
// (pgvector + Apache AGE), resumably, with progress and a verification count; then says how to switch.

import type { Command } from 'commander';

import { chooseEmbedder } from '../../hub/src/embed/select.js';
import { embedderKey } from '../../hub/src/embed/embedder.js';
import { createWorkerEmbedder, embedPoolOptions } from '../../hub/src/embed/worker-embedder.js';
import { HubError, invalid } from '../../hub/src/errors.js';
import { leaseHolder } from '../../hub/src/lease.js';
import { makeLogger } from '../../hub/src/log.js';
import { migrateToPostgres, type MigrateReport, type Reembedder } from '../../hub/src/memory/curation/migrate-to-postgres.js';
import { canonicalPalace } from '../../hub/src/registration.js';
import { action, type CommandContext } from '../context.js';
import { createProgress } from '../progress.js';

function reportText(r: MigrateReport): string {
  const kg = r.knowledge_graph;
  if (r.dry_run)
    return `Dry run: would copy ${r.drawers.source} drawers and ${kg.triples} knowledge-graph facts (${kg.entities} entities) from ${r.palace} to ${r.dsn} (namespace ${r.namespace}).`;
  const lines = [
    `Drawers   ${r.drawers.copied} copied, ${r.drawers.skipped} already there${r.reembedded ? ' (re-embedded)' : ''}; source ${r.drawers.source}, Postgres ${r.drawers.destination ?? 0}`,
    `KG        source ${kg.triples} facts / ${kg.entities} entities; Postgres ${kg.destination_triples ?? 0} / ${kg.destination_entities ?? 0}`,
    kg.mirrored ? `Cypher    graph ${kg.cypher_graph} mirrored (Apache AGE)` : `Cypher    not mirrored: ${kg.mirror_error ?? 'unknown'}`,
  ];
  if (r.verified) lines.push('', `Verified. To switch this palace: PALACE_BACKEND=pgvector PALACE_PGVECTOR_DSN='${r.dsn}' PALACE_BACKEND_NAMESPACE=${r.namespace} palace serve`);
  else lines.push('', 'Verification FAILED: the counts differ (another palace in the same namespace, or a write during the copy); run the command again.');
  return lines.join('\n');
}

async function reembedderFor(ctx: CommandContext, palacePath: string): Promise<{ reembed: Reembedder; close: () => Promise<void> }> {
  const { spec } = chooseEmbedder(ctx.config, palacePath);
  const embedder = await createWorkerEmbedder(spec, embedPoolOptions(ctx.config));
  const info = embedder.info();
  return {
    reembed: { key: embedderKey(info), dimensions: info.dimensions, embed: (texts) => embedder.embed(texts, 'document') },
    close: () => embedder.close(),
  };
}

export function registerMigrateToPostgres(program: Command): void {
  program
    .command('migrate-to-postgres')
    .description('copy the drawers (with vectors) and knowledge graph into Postgres + pgvector; resumable')
    .option('--dsn <url>', 'postgres:// DSN (default: PALACE_PGVECTOR_DSN)')
    .option('--reembed', 're-embed the drawers with the palace embedder instead of copying vectors')
    .option('--dry-run', 'only count what would be copied')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx) => {
        const dsn = typeof ctx.opts.dsn === 'string' ? ctx.opts.dsn : ctx.config.backendSettings.pgvectorDsn;
        if (!dsn) throw invalid('--dsn', 'give the Postgres DSN with --dsn or PALACE_PGVECTOR_DSN');
        if (!/^postgres(ql)?:\/\//.test(dsn)) throw invalid('--dsn', '--dsn must be a postgres:// or postgresql:// URL');
        const palacePath = canonicalPalace(ctx.config.palacePath);
        const dryRun = ctx.opts.dryRun === true;
        const holder = leaseHolder(palacePath);
        if (!dryRun && holder && holder.pid !== process.pid)
          throw new HubError('lease.held', `a hub (pid ${holder.pid}${holder.address ? ` at ${holder.address}` : ''}) serves this palace; stop it before migrating (--dry-run only reads)`);
        const embed = ctx.opts.reembed === true && !dryRun ? await reembedderFor(ctx, palacePath) : undefined;
        const progress = createProgress();
        const tty = Boolean(process.stderr.isTTY);
        try {
          const report = await migrateToPostgres({
            config: ctx.config,
            palacePath,
            dsn,
            reembed: embed?.reembed,
            dryRun,
            log: makeLogger('palace:migrate'),
            onProgress: (p) => {
              if (tty) progress.update(p.done, p.total, `${p.phase} ${p.done}/${p.total}`);
              else ctx.out.note(`progress ${p.phase.replace(' ', '_')} ${p.done}/${p.total}`);
            },
          });
          progress.finish();
          ctx.out.result(report, () => reportText(report));
          return report.verified === false ? 1 : 0;
        } finally {
          await embed?.close();
        }
      }),
    );
}
