// Palace navigation commands: list, move, graph, stats, taxonomy, rooms list|add|rename|remove. Each is
// a tool call (runTool: the live hub's /mcp, or the same tool in-process), like every other command.
// Tunnels live in navigate.ts.

import type { Command } from 'commander';

import { invalid } from '../../hub/src/errors.js';
import { action, type CommandContext } from '../context.js';
import { flag } from '../tool-args.js';
import { runTool } from '../tool-runner.js';

function whole(flag: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw invalid(flag, `${flag} must be a whole number`);
  return n;
}

function table(map: Record<string, number>): string {
  const entries = Object.entries(map);
  if (entries.length === 0) return '  (none)';
  const width = Math.max(...entries.map(([k]) => k.length));
  return entries.map(([k, n]) => `  ${k.padEnd(width)}  ${n}`).join('\n');
}

export function registerPalace(program: Command): void {
  program
    .command('list')
    .description('drawer metadata, in filing order (uses the live hub when there is one)')
    .option('--wing <wing>', 'only this wing')
    .option('--room <room>', 'only this room')
    .option('--limit <n>', 'rows (1-1000, default 50)')
    .option('--offset <n>', 'skip this many rows')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx) => {
        const o = ctx.opts;
        const r = await runTool(ctx.config, 'palace_list_drawers', { wing: flag(o.wing), room: flag(o.room), limit: whole('--limit', o.limit), offset: whole('--offset', o.offset) });
        ctx.out.result(r, () =>
          r.drawers.length === 0
            ? 'No drawers.'
            : [
                ...r.drawers.map((d) => `${d.drawer_id}  ${d.wing}/${d.room}  ${d.filed_at}\n    ${d.preview.replace(/\s+/g, ' ')}`),
                `(${r.offset + 1}-${r.offset + r.drawers.length} of ${r.total})`,
              ].join('\n'),
        );
      }),
    );

  program
    .command('move <drawer_id>')
    .description('move a drawer to another wing and/or room (content never changes)')
    .option('--wing <wing>', 'new wing')
    .option('--room <room>', 'new room')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx, id: string) => {
        const o = ctx.opts;
        const body: { wing?: string; room?: string } = {};
        if (typeof o.wing === 'string' && o.wing.trim()) body.wing = o.wing;
        if (typeof o.room === 'string' && o.room.trim()) body.room = o.room;
        // A move with neither is refused here, before any call.
        if (Object.keys(body).length === 0) throw invalid('--wing', 'give --wing and/or --room');
        const r = await runTool(ctx.config, 'palace_update_drawer', { drawer_id: id, ...body });
        ctx.out.result(r, () => `Moved ${r.drawer_id} to ${r.wing}/${r.room}`);
      }),
    );

  program
    .command('graph')
    .description('wing/room/tunnel counts and a knowledge-graph slice')
    .option('--limit <n>', 'tunnels, entities and facts to show (default 20)')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx) => {
        const r = await runTool(ctx.config, 'palace_graph_stats', { limit: whole('--limit', ctx.opts.limit) });
        ctx.out.result(r, () =>
          [
            `${r.counts.wings} wings, ${r.counts.rooms} rooms, ${r.counts.drawers} drawers, ${r.counts.tunnels} tunnels`,
            ...r.tunnels.map((t) => `  tunnel ${t.room}: ${t.wings.join(' ↔ ')}`),
            `KG: ${r.kg.stats.entities} entities, ${r.kg.stats.triples} facts (${r.kg.stats.current_facts} current)`,
            ...r.kg.top_entities.map((e) => `  ${e.name} (${e.facts})`),
          ].join('\n'),
        );
      }),
    );

  program
    .command('stats')
    .description('palace statistics: kg, graph and status blocks')
    .option('--section <name>', 'only one block: kg, graph or status')
    .option('--tags', 'add tag counts')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx) => {
        const o = ctx.opts;
        if (o.section !== undefined && !['kg', 'graph', 'status'].includes(String(o.section))) throw invalid('--section', '--section must be kg, graph or status');
        const all: Record<string, object> = await runTool(ctx.config, 'palace_stats', {});
        const picked: Record<string, object | undefined> = o.section ? { [String(o.section)]: all[String(o.section)] } : { ...all };
        if (o.tags) picked.tags = (await runTool(ctx.config, 'palace_list_tags', {})).tags;
        ctx.out.result(picked, () =>
          Object.entries(picked)
            .map(([name, block]) => `${name}:\n${Object.entries(block as Record<string, unknown>).map(([k, v]) => `  ${k}: ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`).join('\n')}`)
            .join('\n'),
        );
      }),
    );

  program
    .command('taxonomy')
    .description('wing → room → drawer count')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx) => {
        const r = await runTool(ctx.config, 'palace_get_taxonomy', {});
        ctx.out.result(r, () => {
          const wings = Object.entries(r.taxonomy);
          return wings.length === 0 ? 'No wings.' : wings.map(([w, rooms]) => `${w}\n${table(rooms)}`).join('\n');
        });
      }),
    );

  const rooms = program.command('rooms').description('rooms: list (default), add, rename, remove');
  const roomsList = async (ctx: CommandContext) => {
    const r = await runTool(ctx.config, 'palace_rooms_list', { wing: flag(ctx.opts.wing) });
    ctx.out.result(r, () => (r.rooms.length === 0 ? 'No rooms.' : r.rooms.map((x) => `  ${x.wing}/${x.room}  ${x.drawers}`).join('\n')));
  };
  rooms.option('--wing <wing>', 'only this wing').option('--json', 'machine-readable output').action(action(roomsList));
  rooms.command('list').option('--wing <wing>', 'only this wing').option('--json', 'machine-readable output').action(action(roomsList));
  rooms
    .command('add <wing> <room>')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx, wing: string, room: string) => {
        const r = await runTool(ctx.config, 'palace_rooms_add', { wing, room });
        ctx.out.result(r, () => (r.created ? `Added ${wing}/${room}` : `${wing}/${room} already exists`));
      }),
    );
  rooms
    .command('rename <wing> <room> <new_room>')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx, wing: string, room: string, newRoom: string) => {
        const r = await runTool(ctx.config, 'palace_rooms_rename', { wing, room, new_room: newRoom });
        ctx.out.result(r, () => `Renamed ${wing}/${room} to ${wing}/${newRoom} (${r.moved_drawers} drawers moved)`);
      }),
    );
  rooms
    .command('remove <wing> <room>')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx, wing: string, room: string) => {
        const r = await runTool(ctx.config, 'palace_rooms_remove', { wing, room });
        ctx.out.result(r, () => `Removed ${wing}/${room}`);
      }),
    );
}
