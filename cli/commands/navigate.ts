// Navigation commands: tunnels (--passive) and tunnels add|delete, hallways, hallway list|delete
// (delete needs --confirm, or a y at a terminal prompt), walk, overlap, why, aaak and compress.
// Each runs palace tools through the live hub when there is one; no navigation logic lives here.

import type { Command } from 'commander';

import { HubError, invalid } from '../../hub/src/errors.js';
import type { Hallway } from '../../hub/src/memory/navigation/hallways.js';
import type { WalkNode } from '../../hub/src/memory/navigation/palace-walk.js';
import type { Tunnel } from '../../hub/src/memory/navigation/tunnels.js';
import { action, type CommandContext } from '../context.js';
import { EXIT } from '../output.js';
import { flag } from '../tool-args.js';
import { runTool } from '../tool-runner.js';
import { askYesNo } from '../ask.js';

function whole(flag: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw invalid(flag, `${flag} must be a whole number`);
  return n;
}

/** `wing/room` (split at the first '/') as a tunnel end. */
function roomRef(flag: string, value: string): { wing: string; room: string } {
  const at = value.indexOf('/');
  if (at <= 0 || at === value.length - 1) throw invalid(flag, `${flag} must be WING/ROOM, e.g. palace/decisions`);
  return { wing: value.slice(0, at), room: value.slice(at + 1) };
}

function tunnelLine(t: Tunnel): string {
  return t.kind === 'explicit'
    ? `  ${t.tunnel_id}  ${t.source.wing}/${t.source.room} ↔ ${t.target.wing}/${t.target.room}${t.label ? `  "${t.label}"` : ''}  (explicit)`
    : `  ${t.tunnel_id}  ${t.room}: ${t.wings.join(' ↔ ')} (${t.count} drawers, inferred)`;
}

function hallwayLine(h: Hallway): string {
  return `  ${h.hallway_id}  ${h.wing}: ${h.rooms[0]} ↔ ${h.rooms[1]}  strength ${h.strength}  [${h.label}]`;
}

function viaText(n: WalkNode): string {
  if (!n.via) return '';
  const kind = n.via.kind === 'hallway' ? 'hallway' : n.via.kind === 'tunnel' ? 'tunnel' : 'inferred tunnel';
  return `  via ${kind}${n.via.label ? `: ${n.via.label}` : ''}`;
}

function tree(nodes: readonly WalkNode[], prefix = '', top = true): string[] {
  const lines: string[] = [];
  nodes.forEach((n, i) => {
    const last = i === nodes.length - 1;
    const head = top ? '' : `${prefix}${last ? '└─ ' : '├─ '}`;
    lines.push(`${head}${n.wing}/${n.room} (${n.drawers})${viaText(n)}${n.seen ? '  (shown elsewhere)' : ''}`);
    lines.push(...tree(n.children, top ? '' : `${prefix}${last ? '   ' : '│  '}`, false));
  });
  return lines;
}

async function listHallwaysCmd(ctx: CommandContext): Promise<void> {
  const o = ctx.opts;
  const r = await runTool(ctx.config, 'palace_list_hallways', {
    wing: flag(o.wing),
    limit: whole('--limit', o.limit),
    offset: whole('--offset', o.offset),
    min_count: whole('--min-count', o.minCount),
  });
  ctx.out.result(r, () =>
    r.hallways.length === 0 ? 'No hallways.' : [...r.hallways.map(hallwayLine), `(${r.offset + 1}-${r.offset + r.hallways.length} of ${r.total})`].join('\n'),
  );
}

function registerTunnels(program: Command): void {
  const tunnels = program.command('tunnels').description('tunnels between wings: explicit ones and inferred (shared room names); add, delete');
  tunnels
    .option('--wing <wing>', 'only tunnels touching this wing')
    .option('--passive', 'only inferred (passive) tunnels: room names shared by wings')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx) => {
        const r = await runTool(ctx.config, 'palace_list_tunnels', { wing: flag(ctx.opts.wing), kind: ctx.opts.passive ? 'inferred' : 'all' });
        ctx.out.result(r, () => (r.tunnels.length === 0 ? 'No tunnels.' : r.tunnels.map(tunnelLine).join('\n')));
      }),
    );
  tunnels
    .command('add <from> <to>')
    .description('declare a tunnel between WING/ROOM and another wing\'s WING/ROOM')
    .option('--label <text>', 'what links them')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx, from: string, to: string) => {
        const a = roomRef('<from>', from);
        const b = roomRef('<to>', to);
        const r = await runTool(ctx.config, 'palace_create_tunnel', {
          source_wing: a.wing,
          source_room: a.room,
          target_wing: b.wing,
          target_room: b.room,
          label: flag(ctx.opts.label),
          created_by: ctx.config.agentName,
        });
        ctx.out.result(r, () => `${r.created ? 'Created' : 'Exists:'}${tunnelLine(r.tunnel)}`);
      }),
    );
  tunnels
    .command('delete <tunnel_id>')
    .description('delete an explicit tunnel')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx, id: string) => {
        const r = await runTool(ctx.config, 'palace_delete_tunnel', { tunnel_id: id });
        ctx.out.result(r, () => `Deleted ${id}`);
      }),
    );
}

function registerHallways(program: Command): void {
  const listOptions = (c: Command): Command =>
    c
      .option('--wing <wing>', 'only this wing')
      .option('--limit <n>', 'rows (1-500, default 100)')
      .option('--offset <n>', 'skip this many rows')
      .option('--min-count <n>', 'shared mentions needed (default 2)')
      .option('--json', 'machine-readable output');
  listOptions(program.command('hallways').description('hallways: rooms of one wing joined by shared entities')).action(action(listHallwaysCmd));
  const hallway = program.command('hallway').description('hallway list|delete');
  listOptions(hallway.command('list').description('list hallways')).action(action(listHallwaysCmd));
  hallway
    .command('delete <hallway_id>')
    .description('delete a hallway (remembered, so it is not inferred again); needs --confirm unless answered y at a terminal')
    .option('--confirm', 'delete without asking')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx, id: string) => {
        if (!ctx.opts.confirm) {
          if (!process.stdin.isTTY)
            throw new HubError('input.invalid', 'hallway delete changes the palace: pass --confirm (no terminal to ask on); nothing was deleted', { field: '--confirm' });
          const all = await runTool(ctx.config, 'palace_list_hallways', { limit: 500, min_count: 1 });
          const h = all.hallways.find((x) => x.hallway_id === id);
          if (!(await askYesNo(`Delete hallway ${h ? `${h.wing}: ${h.rooms[0]} ↔ ${h.rooms[1]} [${h.label}]` : id}?`))) {
            ctx.out.note('Not deleted.');
            return EXIT.ok;
          }
        }
        const r = await runTool(ctx.config, 'palace_delete_hallway', { hallway_id: id });
        ctx.out.result(r, () => `Deleted ${id} (it will not be inferred again)`);
        return EXIT.ok;
      }),
    );
}

export function registerNavigate(program: Command): void {
  registerTunnels(program);
  registerHallways(program);

  program
    .command('walk')
    .description('walk from a room (or every room of a wing) through hallways and tunnels, as a tree')
    .option('--wing <wing>', 'start in this wing')
    .option('--room <room>', 'start at this room')
    .option('--follow <what>', 'palace (hallways and tunnels, default) or tunnels', 'palace')
    .option('--depth <n>', 'how many steps (0-5, default 2)')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx) => {
        const o = ctx.opts;
        if (o.follow !== 'palace' && o.follow !== 'tunnels') throw invalid('--follow', '--follow must be palace or tunnels');
        const r = await runTool(ctx.config, 'palace_walk_palace', { wing: flag(o.wing), room: flag(o.room), follow: o.follow, depth: whole('--depth', o.depth) });
        ctx.out.result(r, () => [...tree(r.roots), `(${r.rooms_reached} rooms reached following ${r.follow}, depth ${r.depth})`].join('\n'));
      }),
    );

  program
    .command('overlap [wing_a] [wing_b]')
    .description('what two wings share (rooms, tags, entities, near-duplicate drawers); without wings, every pair ranked')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx, a?: string, b?: string) => {
        const r = await runTool(ctx.config, 'palace_wing_overlap', { wing_a: a, wing_b: b });
        ctx.out.result(r, () => {
          if (Array.isArray(r.pairs)) {
            const pairs = r.pairs as Array<{ wings: string[]; score: number; shared_rooms: string[]; shared_entities: string[]; shared_tags: string[] }>;
            return pairs.length === 0
              ? 'No overlap between wings.'
              : pairs
                  .map((p) => `${p.wings.join(' ↔ ')}  score ${p.score}\n    rooms: ${p.shared_rooms.join(', ') || '-'}\n    entities: ${p.shared_entities.join(', ') || '-'}\n    tags: ${p.shared_tags.join(', ') || '-'}`)
                  .join('\n');
          }
          const p = r as { wings: string[]; score: number; shared_rooms: string[]; shared_tags: Array<{ tag: string }>; shared_entities: Array<{ entity: string }>; near_duplicates: Array<Record<string, unknown>> };
          const [x = '', y = ''] = p.wings;
          return [
            `${x} ↔ ${y}  score ${p.score}`,
            `  rooms: ${p.shared_rooms.join(', ') || '-'}`,
            `  entities: ${p.shared_entities.map((e) => e.entity).join(', ') || '-'}`,
            `  tags: ${p.shared_tags.map((t) => t.tag).join(', ') || '-'}`,
            `  near-duplicate drawers: ${p.near_duplicates.length}`,
            ...p.near_duplicates.map((d) => {
              const l = d[x] as { drawer_id: string; room: string };
              const m = d[y] as { drawer_id: string; room: string };
              return `    ${l.drawer_id} (${x}/${l.room}) ≈ ${m.drawer_id} (${y}/${m.room})  ${String(d.similarity)}`;
            }),
          ].join('\n');
        });
      }),
    );

  program
    .command('why <drawer_id>')
    .description('why a drawer sits in its wing and room: how they were chosen, moves, provenance, links')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx, id: string) => {
        const r = await runTool(ctx.config, 'palace_why', { drawer_id: id });
        ctx.out.result(r, () =>
          [
            `${r.drawer_id} is in ${r.wing}/${r.room} (${r.origin})`,
            ...r.reasons.map((x) => `  - ${x}`),
            `  source_file: ${r.source_file ?? '-'}`,
            `  filed_at: ${r.filed_at}  created_by: ${r.created_by ?? r.added_by}  tags: ${r.tags.join(', ') || '-'}`,
            `  tunnels: ${r.tunnels.length === 0 ? '-' : ''}`,
            ...r.tunnels.map((t) => `  ${tunnelLine(t)}`),
            `  hallways: ${r.hallways.length === 0 ? '-' : ''}`,
            ...r.hallways.map((h) => `  ${hallwayLine(h)}`),
            ...(r.aaak ? ['  aaak:', ...r.aaak.split('\n').map((l) => `    ${l}`)] : []),
          ].join('\n'),
        );
      }),
    );

  program
    .command('aaak')
    .description('the AAAK compact summary dialect (what palace compress writes)')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx) => {
        const r = await runTool(ctx.config, 'palace_get_aaak_spec', {});
        ctx.out.result(r, () => r.aaak_spec);
      }),
    );

  program
    .command('compress')
    .description('write an AAAK summary beside each drawer (never changes drawer content; re-runs rewrite only changes)')
    .option('--wing <wing>', 'only this wing')
    .option('--room <room>', 'only this room')
    .option('--dry-run', 'report without writing')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx) => {
        const o = ctx.opts;
        const r = await runTool(ctx.config, 'palace_compress', { wing: flag(o.wing), room: flag(o.room), dry_run: Boolean(o.dryRun) });
        ctx.out.result(r, () =>
          [
            `${r.dry_run ? 'Would write' : 'Wrote'} ${r.written} summaries (${r.unchanged} unchanged, ${r.removed} removed) for ${r.drawers} drawers`,
            `  ${r.source_bytes} bytes verbatim → ${r.summary_bytes} bytes AAAK (${r.bytes_saved} saved; ~${r.token_estimate.verbatim} → ~${r.token_estimate.aaak} tokens)`,
            ...r.sample.flatMap((s) => [`  ${s.drawer_id}`, ...s.text.split('\n').map((l) => `    ${l}`)]),
          ].join('\n'),
        );
      }),
    );
}
