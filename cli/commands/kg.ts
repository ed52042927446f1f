// Knowledge-graph commands: kg add|invalidate|supersede|query|timeline. Each runs one palace tool,
// through the live hub when there is one.

import type { Command } from 'commander';

import { invalid } from '../../hub/src/errors.js';
import type { KgFact } from '../../hub/src/kg/knowledge-graph.js';
import { KG_TIMELINE_MAX } from '../../hub/src/kg/knowledge-graph.js';
import { action } from '../context.js';
import { flag } from '../tool-args.js';
import { runTool } from '../tool-runner.js';

function factLine(f: KgFact): string {
  const span = `${f.valid_from ?? '…'} → ${f.valid_to ?? 'now'}`;
  const from = f.origin ? `  from ${f.origin}` : '';
  return `${f.subject} —${f.predicate}→ ${f.object}  [${span}]${f.current ? '' : ' (ended)'}${f.conflicting ? ' (CONFLICTING: another hub states otherwise)' : ''}  ${f.triple_id}${from}`;
}

function whole(flag: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw invalid(flag, `${flag} must be a whole number ≥ 1`);
  return n;
}

export function registerKg(program: Command): void {
  const kg = program.command('kg').description('knowledge graph: temporal facts (subject —predicate→ object)');

  kg.command('add <subject> <predicate> <object>')
    .description('state a fact')
    .option('--valid-from <when>', 'date (YYYY-MM-DD) or ISO instant')
    .option('--valid-to <when>', 'date (YYYY-MM-DD) or ISO instant')
    .option('--subject-type <type>', 'person, project, tool, …')
    .option('--object-type <type>', 'person, project, tool, …')
    .option('--source-file <path>', 'where the fact came from')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx, subject: string, predicate: string, object: string) => {
        const o = ctx.opts;
        const r = await runTool(ctx.config, 'palace_kg_add', {
          subject,
          predicate,
          object,
          valid_from: flag(o.validFrom),
          valid_to: flag(o.validTo),
          subject_type: flag(o.subjectType),
          object_type: flag(o.objectType),
          source_file: flag(o.sourceFile),
          added_by: ctx.config.agentName,
        });
        ctx.out.result(r, () => `${r.existing ? 'Already known' : 'Added'}: ${factLine(r.fact)}`);
      }),
    );

  kg.command('invalidate <subject> <predicate> <object>')
    .description('close a fact (it is kept, with its end date)')
    .option('--ended <when>', 'when it stopped being true (default now)')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx, subject: string, predicate: string, object: string) => {
        const r = await runTool(ctx.config, 'palace_kg_invalidate', { subject, predicate, object, ended: flag(ctx.opts.ended) });
        ctx.out.result(r, () => r.facts.map((f) => `Closed: ${factLine(f)}`).join('\n'));
      }),
    );

  kg.command('supersede <subject> <predicate> <old_object> <new_object>')
    .description('change a fact atomically: close the old object and open the new one at one instant')
    .option('--at <when>', 'the boundary (default now)')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx, subject: string, predicate: string, oldObject: string, newObject: string) => {
        const r = await runTool(ctx.config, 'palace_kg_supersede', {
          subject,
          predicate,
          old_object: oldObject,
          new_object: newObject,
          at: flag(ctx.opts.at),
          added_by: ctx.config.agentName,
        });
        ctx.out.result(r, () => [...r.invalidated.map((f) => `Closed: ${factLine(f)}`), `Added:  ${factLine(r.added)}`].join('\n'));
      }),
    );

  kg.command('query <entity>')
    .description('facts about an entity (all, or those valid --as-of a time)')
    .option('--as-of <when>', 'date (end of that day) or ISO instant')
    .option('--direction <d>', 'outgoing, incoming or both (default)')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx, entity: string) => {
        const r = await runTool(ctx.config, 'palace_kg_query', { entity, as_of: flag(ctx.opts.asOf), direction: flag(ctx.opts.direction) });
        ctx.out.result(r, () => (r.facts.length === 0 ? 'No facts.' : r.facts.map(factLine).join('\n')));
      }),
    );

  kg.command('timeline [entity]')
    .description(`facts in chronological order (pages of at most ${KG_TIMELINE_MAX}; --all follows the cursor)`)
    .option('--as-of <when>', 'only facts that had started by then')
    .option('--limit <n>', `rows per page (1-${KG_TIMELINE_MAX})`)
    .option('--cursor <c>', 'continue from a previous page')
    .option('--all', 'read every page')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx, entity: string | undefined) => {
        const o = ctx.opts;
        const limit = whole('--limit', o.limit);
        // The tool answers at most 100 rows per call; a larger --limit cannot be honoured.
        if (limit !== undefined && limit > KG_TIMELINE_MAX) throw invalid('--limit', `--limit is at most ${KG_TIMELINE_MAX}; use --all to page`);
        type Page = { timeline: KgFact[]; next_cursor: string | null; total: number };
        let cursor = typeof o.cursor === 'string' ? o.cursor : undefined;
        const rows: KgFact[] = [];
        let page: Page;
        do {
          page = await runTool(ctx.config, 'palace_kg_timeline', { entity, as_of: flag(o.asOf), limit, cursor });
          rows.push(...page.timeline);
          cursor = page.next_cursor ?? undefined;
        } while (o.all && cursor);
        const result = { ...page, timeline: rows, count: rows.length };
        ctx.out.result(result, () =>
          [rows.length === 0 ? 'No facts.' : rows.map(factLine).join('\n'), ...(page.next_cursor ? [`(more: --cursor ${page.next_cursor})`] : [])].join('\n'),
        );
      }),
    );
}
