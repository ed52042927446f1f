// `palace set-embedder --model NAME [--force]`: chooses the embedding model of this palace. Fetches a
// known ONNX model where the network allows (offline: says exactly which files to place where);
// with --force on a palace recorded with another model, re-embeds every drawer from its verbatim text.

import type { Command } from 'commander';

import { HubError } from '../../hub/src/errors.js';
import { BUNDLED_DIMENSIONS, BUNDLED_MODEL } from '../../hub/src/embed/bundled-embedder.js';
import { downloadModel, knownModel, modelStatus, missingModelError, onnxSpecFor, canonicalModelName } from '../../hub/src/embed/models.js';
import { readEmbedderRecord, writeEmbedderRecord } from '../../hub/src/embed/select.js';
import type { EmbedderSpec } from '../../hub/src/embed/spec.js';
import { createWorkerEmbedder } from '../../hub/src/embed/worker-embedder.js';
import { leaseHolder } from '../../hub/src/lease.js';
import { makeLogger } from '../../hub/src/log.js';
import { reembedPalace } from '../../hub/src/memory/curation/reembed.js';
import { canonicalPalace } from '../../hub/src/registration.js';
import { action, type CommandContext } from '../context.js';
import { createProgress } from '../progress.js';

async function ensureModel(ctx: CommandContext, name: string, redownload: boolean): Promise<EmbedderSpec> {
  if (name === BUNDLED_MODEL || name === 'bundled') return { provider: 'bundled' };
  const status = modelStatus(ctx.config.home, name);
  if (!status.ready || redownload) {
    if (!knownModel(name)) throw missingModelError(status);
    const progress = createProgress();
    ctx.out.note(`Fetching ${name} into ${status.dir} ...`);
    await downloadModel(ctx.config.home, name, {
      force: redownload,
      onProgress: (p) => progress.update(p.receivedBytes, p.totalBytes, `${p.file} (${p.fileIndex}/${p.fileCount})`),
    }).finally(() => progress.finish());
  }
  return onnxSpecFor(ctx.config.home, name, ctx.config.embeddingDevice);
}

async function setEmbedder(ctx: CommandContext): Promise<void> {
  const o = ctx.opts;
  const requested = String(o.model);
  const name = requested === 'bundled' ? BUNDLED_MODEL : canonicalModelName(requested);
  const palacePath = canonicalPalace(ctx.config.palacePath);
  const holder = leaseHolder(palacePath);
  if (holder && holder.pid !== process.pid)
    throw new HubError('lease.held', `a hub (pid ${holder.pid}${holder.address ? ` at ${holder.address}` : ''}) serves this palace; stop it before changing its embedder`);
  const record = readEmbedderRecord(palacePath);
  if (record && record.model !== name && !o.force)
    throw new HubError(
      'memory.embedder_mismatch',
      `this palace is recorded with ${record.model} (${record.dimensions}-d). Re-run with --force to switch to ${name}: every drawer is then re-embedded from its verbatim content`,
    );
  const spec = await ensureModel(ctx, name, Boolean(o.redownload));
  const embedder = await createWorkerEmbedder(spec);
  try {
    const info = embedder.info();
    if (spec.provider === 'bundled' && info.dimensions !== BUNDLED_DIMENSIONS) throw new HubError('internal', 'bundled model has unexpected dimensions');
    let reembedded = 0;
    if (record && (record.model !== info.model || record.dimensions !== info.dimensions)) {
      const progress = createProgress();
      reembedded = await reembedPalace(palacePath, record.dimensions, embedder, makeLogger('palace:set-embedder'), (p) =>
        progress.update(p.done, p.total, `re-embedding drawers ${p.done}/${p.total}`),
      );
      progress.finish();
    } else {
      writeEmbedderRecord(palacePath, info);
    }
    const result = { palace: palacePath, model: info.model, provider: info.provider, dimensions: info.dimensions, device: info.device, reembedded };
    ctx.out.result(result, () =>
      `Embedder for ${palacePath}: ${info.model} (${info.provider}, ${info.dimensions}-d, ${info.device})` +
        (record && reembedded >= 0 && record.model !== info.model ? `; re-embedded ${reembedded} drawers` : ''),
    );
  } finally {
    await embedder.close();
  }
}

export function registerSetEmbedder(program: Command): void {
  program
    .command('set-embedder')
    .description(`choose this palace's embedding model (${BUNDLED_MODEL} = bundled; all-MiniLM-L6-v2, bge-small-en-v1.5 = ONNX)`)
    .requiredOption('--model <name>', 'model name')
    .option('--force', 'switch a palace recorded with another model (re-embeds every drawer)')
    .option('--redownload', 'fetch the model files again even if present')
    .option('--json', 'machine-readable output')
    .action(action(setEmbedder));
}
