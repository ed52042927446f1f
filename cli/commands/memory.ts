// Memory commands: search, status, drawer get|add|delete|update, rate, duplicate, tags, wings.
// Each runs one palace tool, through the live hub when there is one.

import type { Command } from 'commander';

import { HubError, invalid } from '../../hub/src/errors.js';
import type { DrawerView } from '../../hub/src/memory/drawers/memory.js';
import { stdoutColor } from '../config.js';
import { action, collect, type CommandContext } from '../context.js';
import { EXIT } from '../output.js';
import { readText } from '../read-input.js';
import { hitText } from '../search-format.js';
import { flag, type CliArgs } from '../tool-args.js';
import type { ResultOf, ToolName } from '../../hub/src/mcp/contract.js';
import { runTool } from '../tool-runner.js';

function drawerText(d: DrawerView & { chunk_ids?: string[] }): string {
  return [
    `${d.drawer_id}  ${d.wing}/${d.room}${d.tags.length ? `  tags: ${d.tags.join(', ')}` : ''}`,
    `  filed ${d.filed_at} by ${d.created_by}${d.source_file ? `  source: ${d.source_file}` : ''}${d.useful === null ? '' : `  useful: ${d.useful}`}`,
    ...(d.chunk_ids ? [`  chunks: ${d.chunk_ids.length}`] : []),
    '',
    d.content,
  ].join('\n');
}

function counts(title: string, map: Record<string, number>): string {
  const entries = Object.entries(map);
  if (entries.length === 0) return `No ${title}.`;
  const width = Math.max(...entries.map(([k]) => k.length));
  return entries.map(([k, n]) => `  ${k.padEnd(width)}  ${n}`).join('\n');
}

/** Content from --content, --file, or stdin when neither is given and stdin is not a terminal. */
function contentOf(o: Record<string, unknown>): string {
  if (typeof o.content === 'string' && typeof o.file === 'string') throw invalid('--content', 'pass --content or --file, not both');
  if (typeof o.content === 'string') return o.content;
  if (typeof o.file === 'string') return readText(o.file, '--file');
  if (process.stdin.isTTY) throw invalid('--content', 'give the content with --content, --file PATH, or on stdin');
  return readText('-', 'stdin');
}

const call = <N extends ToolName>(ctx: CommandContext, name: N, args: CliArgs<N>) => runTool(ctx.config, name, args);

export function registerMemory(program: Command): void {
  program
    .command('search <query>')
    .description('search the palace (hybrid: meaning + keywords); quotes drawers verbatim')
    .option('--wing <wing>', 'only this wing')
    .option('--room <room>', 'only this room')
    .option('--tag <tag>', 'only drawers with this tag; repeatable', collect)
    .option('--limit <n>', 'results (1-100, default 5)')
    .option('--mode <mode>', 'hybrid (default), vector or text')
    .option('--full', 'print each whole drawer, not only its best-matching lines')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx, query: string) => {
        const o = ctx.opts;
        const limit = o.limit === undefined ? undefined : Number(o.limit);
        if (limit !== undefined && !Number.isInteger(limit)) throw invalid('--limit', '--limit must be a whole number');
        const result = await call(ctx, 'palace_search', { query, wing: flag(o.wing), room: flag(o.room), tags: flag(o.tag), limit, mode: flag(o.mode) });
        ctx.out.result(result, () =>
          [
            ...(result.sanitized_query ? [`(searched for: ${result.sanitized_query})`] : []),
            result.results.length === 0 ? 'No matching drawers.' : result.results.map((h, i) => hitText(h, i, { full: Boolean(o.full), color: stdoutColor() })).join('\n\n'),
          ].join('\n'),
          { styled: true },
        );
      }),
    );

  /** What replicates where (docs/memory-replication.md). */
  function replicationLine(r: ResultOf<'palace_status'>['replication']): string {
    if (r && 'error' in r && r.error) return `replicas unknown: ${r.error.message}`;
    const peers = r?.peers ?? [];
    if (peers.length === 0) return 'replicas no wing replicates (opt in: palace sync share <wing> --with <peer>)';
    const records = (r?.feeds ?? []).reduce((n, f) => n + f.records, 0);
    const re = r?.reembedding;
    const waiting = re?.waiting ?? 0;
    const reembedding = waiting > 0 && re ? `, re-embedding ${re.reembedded} of ${re.total} replicated drawers` : '';
    return `replicas ${peers.map((p) => `${[...p.wings, ...(p.kg ? ['the knowledge graph'] : [])].join(', ')} with ${p.name}`).join('; ')} (${records} feed records${reembedding})`;
  }

  program
    .command('status')
    .description('what this palace holds and who serves it')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx) => {
        const s = await call(ctx, 'palace_status', { include_memory: true });
        ctx.out.result(s, () => {
          const m = s.memory;
          const emb = m.loaded ? m.embedder : undefined;
          return [
            `palace   ${s.palace_path}`,
            `served   ${s.role === 'hub' ? `by the hub at ${String(s.listen)}` : 'directly (no hub running)'}${s.read_only ? ' (read-only)' : ''}`,
            `memory   ${m.loaded ? `${m.drawers} drawers in ${m.wings} wings, ${m.rooms} rooms` : `not available: ${JSON.stringify(m.error ?? m)}`}`,
            ...(emb ? [`embedder ${emb.model} (${emb.dimensions}-d, ${emb.device === 'not started' ? 'model not loaded yet' : emb.device})`] : []),
            `log      ${s.logstream.events} events, ${s.logstream.open_tasks} open tasks of ${s.logstream.tasks}`,
            replicationLine(s.replication),
            `identity ${s.identity.mode === 'open' ? 'open (unregistered agent names are believed)' : 'enforced (only registered agents write)'}, ${s.identity.agents} registered agent(s)`,
          ].join('\n');
        });
      }),
    );

  const drawer = program.command('drawer').description('one drawer: get, add, delete, update');
  drawer
    .command('get <drawer_id>')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx, id: string) => {
        const d = await call(ctx, 'palace_get_drawer', { drawer_id: id });
        ctx.out.result(d, () => drawerText(d));
      }),
    );
  drawer
    .command('add')
    .description('file verbatim content (from --content, --file or stdin)')
    .requiredOption('--wing <wing>', 'project or person')
    .requiredOption('--room <room>', 'topic')
    .option('--content <text>', 'the content')
    .option('--file <path>', 'read the content from a file')
    .option('--tag <tag>', 'repeatable', collect)
    .option('--source-file <path>', 'where the content came from')
    .option('--added-by <agent>', 'who files it (default: PALACE_AGENT_NAME or "cli")')
    .option('--force', 'file even when a near-duplicate exists')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx) => {
        const o = ctx.opts;
        const r = await call(ctx, 'palace_add_drawer', {
          wing: flag(o.wing),
          room: flag(o.room),
          content: contentOf(o),
          tags: flag(o.tag),
          source_file: flag(o.sourceFile),
          added_by: flag(o.addedBy ?? ctx.config.agentName ?? 'cli'),
          force: Boolean(o.force),
        });
        ctx.out.result(r, () =>
          r.filed
            ? `Filed ${r.drawer_id}${r.chunk_ids ? ` (${r.chunk_ids.length} chunks)` : ''}`
            : `Not filed: near-duplicate of ${r.duplicate_of} (similarity ${r.similarity}); use --force to file anyway`,
        );
        // Refused as a near-duplicate: exit 1, like `duplicate --fail-on-duplicate`.
        return r.filed ? EXIT.ok : EXIT.error;
      }),
    );
  drawer
    .command('delete <drawer_id>')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx, id: string) => {
        const r = await call(ctx, 'palace_delete_drawer', { drawer_id: id });
        ctx.out.result(r, () => `Deleted ${id} (${r.deleted} row${r.deleted === 1 ? '' : 's'}).`);
      }),
    );
  drawer
    .command('update <drawer_id>')
    .description('move a drawer to another wing/room or replace its tags (content never changes)')
    .option('--wing <wing>', 'new wing')
    .option('--room <room>', 'new room')
    .option('--tag <tag>', 'replace tags; repeatable', collect)
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx, id: string) => {
        const o = ctx.opts;
        if (o.wing === undefined && o.room === undefined && o.tag === undefined) throw invalid('--wing', 'give --wing, --room or --tag');
        const d = await call(ctx, 'palace_update_drawer', { drawer_id: id, wing: flag(o.wing), room: flag(o.room), tags: flag(o.tag) });
        ctx.out.result(d, () => `Updated ${d.drawer_id}: now ${d.wing}/${d.room}${d.tags.length ? ` tags ${d.tags.join(', ')}` : ''}`);
      }),
    );

  program
    .command('rate <drawer_id>')
    .description('say whether a drawer was useful (not-useful drawers rank lower, never vanish)')
    .option('--useful', 'it helped')
    .option('--not-useful', 'it misled or was irrelevant')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx, id: string) => {
        const o = ctx.opts;
        if (Boolean(o.useful) === Boolean(o.notUseful)) throw invalid('--useful', 'give exactly one of --useful or --not-useful');
        const r = await call(ctx, 'palace_rate_memory', { drawer_id: id, useful: Boolean(o.useful) });
        ctx.out.result(r, () => `Rated ${id} ${o.useful ? 'useful' : 'not useful'}.`);
      }),
    );

  program
    .command('duplicate')
    .description('is this content (from --content, --file or stdin) already in the palace?')
    .option('--content <text>', 'the content')
    .option('--file <path>', 'read the content from a file')
    .option('--threshold <x>', 'similarity threshold (default 0.9)')
    .option('--fail-on-duplicate', 'exit 1 when a duplicate is found')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx) => {
        const o = ctx.opts;
        const threshold = o.threshold === undefined ? undefined : Number(o.threshold);
        let r: { is_duplicate: boolean; matches: Array<{ drawer_id: string; wing: string; room: string; similarity: number }> };
        try {
          r = await call(ctx, 'palace_check_duplicate', { content: contentOf(o), threshold });
        } catch (err) {
          // Without a working vector index a duplicate check cannot answer: always exit 2.
          if (err instanceof HubError && err.code.startsWith('memory.')) {
            const message = `the vector index is not available (${err.message})`;
            if (ctx.out.json) ctx.out.result({ error: { ...err.toJSON(), message } }, () => '');
            else ctx.out.note(`Error: ${message}`);
            return EXIT.usage;
          }
          throw err;
        }
        ctx.out.result(r, () =>
          r.is_duplicate
            ? ['Duplicate of:', ...r.matches.map((m) => `  ${m.drawer_id}  ${m.wing}/${m.room}  similarity ${m.similarity}`)].join('\n')
            : 'No duplicate.',
        );
        return r.is_duplicate && o.failOnDuplicate ? EXIT.error : EXIT.ok;
      }),
    );

  program
    .command('tags')
    .description('tags in use, with counts')
    .option('--wing <wing>', 'only this wing')
    .option('--room <room>', 'only this room')
    .option('--min-count <n>', 'only tags used at least n times')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx) => {
        const o = ctx.opts;
        const r = await call(ctx, 'palace_list_tags', {
          wing: flag(o.wing),
          room: flag(o.room),
          min_count: o.minCount === undefined ? undefined : Number(o.minCount),
        });
        ctx.out.result(r, () => counts('tags', r.tags));
      }),
    );

  program
    .command('wings')
    .description('wings with their drawer counts')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx) => {
        const r = await call(ctx, 'palace_list_wings', {});
        ctx.out.result(r, () => counts('wings', r.wings));
      }),
    );
}
