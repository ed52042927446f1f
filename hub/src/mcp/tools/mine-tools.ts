// Mining tools: palace_mine (project files, transcripts, documents, source adapters), palace_mined
// (what was mined, from where, when) and palace_repair_status (vector index against the drawers).
// A mine is mutating but never holds the request lock for its whole run: it locks per write step.
// It reads only inside the mining roots (mine/roots.ts).

import { z } from 'zod';

import { invalid } from '../../errors.js';
import { readEmbedderRecord } from '../../embed/select.js';
import { resolveAdapter } from '../../mine/adapters.js';
import { readManifest } from '../../mine/manifest.js';
import { admitSource, minePolicy, walkAdmits } from '../../mine/roots.js';
import { mineSource, type MineRequest } from '../../mine/miner.js';
import { canonicalPalace } from '../../registration.js';
import { defineTool } from './tool.js';
import { writerOf } from '../../memory/drawers/identity.js';

export const mineTool = defineTool({
  name: 'palace_mine',
  title: 'Mine files into the palace',
  description:
    'Mine a project directory (text and code; .gitignore respected), conversation transcripts (mode convos: Claude Code, Codex, Gemini CLI, ChatGPT, Claude.ai, Slack exports, `>` transcripts) or documents (mode extract: PDF, DOCX, HTML, Markdown, text) into drawers with source_file and position. Re-mining replaces exactly the changed files\' drawers; unchanged files are skipped. adapter picks a source adapter by name instead of a mode. background true queues the mine and returns at once.',
  input: {
    source: z.string().optional().describe('Absolute path of the directory or file to mine (optional with an adapter that has a default location)'),
    mode: z.enum(['projects', 'convos', 'extract']).optional().describe('projects (default), convos or extract'),
    adapter: z.string().optional().describe('A source adapter name (overrides mode)'),
    wing: z.string().optional().describe('Wing for the drawers (default: the folder name)'),
    room: z.string().optional().describe('Room for every drawer (default: per folder / transcript format)'),
    dry_run: z.boolean().optional().describe('Report what would be filed; write nothing'),
    prune: z.boolean().optional().describe('Remove drawers of previously mined files that are gone or now ignored'),
    force: z.boolean().optional().describe('Re-mine unchanged files too'),
    gitignore: z.boolean().optional().describe('Respect .gitignore files (default true)'),
    limit: z.number().int().min(0).optional().describe('Mine at most this many files (0 = all)'),
    created_by: z.string().optional().describe('Your agent name (added_by is an alias)'),
    added_by: z.string().optional().describe('Alias of created_by'),
    background: z.boolean().optional().describe('Queue the mine and return its job at once'),
  },
  mutating: true,
  lockFree: false,
  stepLocked: true,
  handler: async (args, hub, ctx) => {
    const adapter = args.adapter === undefined ? undefined : resolveAdapter(args.adapter);
    const path = args.source ?? adapter?.defaultRoot?.();
    if (!path) throw invalid('source', 'give the directory or file to mine');
    // Every caller, hub or in-process CLI, mines only inside the mining roots (README: mining roots).
    const policy = minePolicy(hub.config, { networkExposed: hub.networkExposed });
    admitSource(policy, path);
    const request: MineRequest = {
      path,
      mode: adapter?.mode ?? args.mode ?? 'projects',
      adapter,
      wing: args.wing,
      room: args.room,
      dryRun: args.dry_run === true,
      prune: args.prune === true,
      force: args.force === true,
      gitignore: args.gitignore !== false,
      limit: args.limit ?? 0,
      admit: walkAdmits(policy),
      ...(writerOf(args, 'created_by', 'added_by') ? { addedBy: writerOf(args, 'created_by', 'added_by') } : {}),
    };
    const step = ctx.withLock ?? (<T>(fn: () => Promise<T>) => fn());
    const palacePath = canonicalPalace(hub.config.palacePath);
    const run = (signal?: AbortSignal) =>
      // Opened by the mine (first use): every embedding worker starts with it, not after the first.
      mineSource(() => hub.memory.get({ warmEmbedder: true }), palacePath, request, {
        step,
        signal,
        progress: (p) => void ctx.progress(p.files_done, p.files_total, `${p.drawers_filed} drawers`).catch(() => undefined),
      });
    if (args.background === true) return { accepted: true, job: hub.mineJobs.start(path, () => run()) };
    return run(ctx.signal);
  },
});

export const minedTool = defineTool({
  name: 'palace_mined',
  title: 'What has been mined',
  description: 'Files mined into the palace: from where (source file and mined root), into which wing and room, how many drawers, and when. Also the hub\'s recent background mines.',
  input: {
    wing: z.string().optional().describe('Only this wing'),
    source: z.string().optional().describe('Only files under this path'),
    limit: z.number().int().min(0).max(10_000).optional().describe('How many files to list (default 100; 0 = only the per-source totals)'),
  },
  mutating: false,
  lockFree: true,
  handler: (args, hub) => {
    const manifest = readManifest(canonicalPalace(hub.config.palacePath));
    const files = Object.entries(manifest)
      .filter(([file, e]) => (args.wing === undefined || e.wing === args.wing) && (args.source === undefined || file.startsWith(args.source)))
      .map(([file, e]) => ({ source_file: file, ...e }))
      .sort((a, b) => (a.source_file < b.source_file ? -1 : 1));
    const sources = new Map<string, { root: string; wing: string; mode: string; files: number; drawers: number; last_mined_at: string }>();
    for (const f of files) {
      const key = `${f.root}\u0000${f.wing}\u0000${f.mode}`;
      const s = sources.get(key) ?? { root: f.root, wing: f.wing, mode: f.mode, files: 0, drawers: 0, last_mined_at: f.mined_at };
      s.files++;
      s.drawers += f.drawers;
      if (f.mined_at > s.last_mined_at) s.last_mined_at = f.mined_at;
      sources.set(key, s);
    }
    return {
      sources: [...sources.values()],
      files: files.slice(0, args.limit ?? 100),
      total_files: files.length,
      total_drawers: files.reduce((n, f) => n + f.drawers, 0),
      ...(hub.role === 'hub' ? { jobs: hub.mineJobs.list() } : {}),
    };
  },
});

export const repairStatusTool = defineTool({
  name: 'palace_repair_status',
  title: 'Vector index health',
  description: 'Read-only check of the vector index: drawers per embedder against the palace\'s recorded embedder, and the mined-files manifest against the drawers. `palace repair --mode rebuild` fixes a mismatch.',
  input: {},
  mutating: false,
  lockFree: true,
  handler: async (_args, hub) => {
    const palacePath = canonicalPalace(hub.config.palacePath);
    const memory = await hub.memory.get();
    const census = await memory.embedderCensus();
    const record = readEmbedderRecord(palacePath) ?? null;
    const manifest = Object.values(readManifest(palacePath));
    const stale = census.drawers - (census.by_embedder[census.current] ?? 0);
    const manifestDrawers = manifest.reduce((n, e) => n + e.drawers, 0);
    return {
      palace: palacePath,
      drawers: census.drawers,
      embedder: { recorded: record ? `${record.model}/${record.dimensions}` : null, in_use: census.current },
      by_embedder: census.by_embedder,
      stale_vectors: stale,
      manifest: { files: manifest.length, drawers: manifestDrawers },
      ok: stale === 0 && (record === null || `${record.model}/${record.dimensions}` === census.current),
      ...(stale > 0 ? { hint: 'run `palace repair --mode rebuild` to re-embed every drawer from its verbatim content' } : {}),
    };
  },
});

export const mineTools = [mineTool, minedTool, repairStatusTool];
