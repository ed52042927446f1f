// Palace structure tools: drawer listing, graph and stats views (the same data as the daemon
// endpoints), taxonomy and rooms (list/add/rename/remove). Tunnels live in navigation-tools.ts.

import { z } from 'zod';

import { graphView, listDrawers, statsView } from '../../memory/navigation/palace-views.js';
import { addRoom, listRooms, removeRoom, renameRoom, taxonomy } from '../../memory/navigation/rooms.js';
import { canonicalPalace } from '../../registration.js';
import type { HubServices } from '../../services.js';
import { hubStatus } from '../../status.js';
import { defineTool } from './tool.js';

const palaceOf = (hub: HubServices): string => canonicalPalace(hub.config.palacePath);

export const listDrawersTool = defineTool({
  name: 'palace_list_drawers',
  title: 'List drawers',
  description: 'Drawer metadata (placement, provenance, a short preview) in filing order, paged with limit/offset. Use palace_get_drawer for full content.',
  input: {
    wing: z.string().optional(),
    room: z.string().optional(),
    limit: z.number().int().min(1).max(1000).optional().describe('default 50'),
    offset: z.number().int().min(0).optional(),
  },
  mutating: false,
  lockFree: true,
  handler: async (args, hub) => listDrawers(await hub.memory.get(), args),
});

export const graphStatsTool = defineTool({
  name: 'palace_graph_stats',
  title: 'Palace graph',
  description: 'Wing/room/tunnel counts and a knowledge-graph slice (top entities, recent facts, KG stats).',
  input: { limit: z.number().int().min(1).max(200).optional() },
  mutating: false,
  lockFree: true,
  handler: async (args, hub) => graphView(await hub.memory.get(), hub.kg.get(), args.limit),
});

export const statsTool = defineTool({
  name: 'palace_stats',
  title: 'Palace stats',
  description: 'Three blocks: kg (facts), graph (wings, rooms, tunnels), status (version, uptime, embedder).',
  input: {},
  mutating: false,
  lockFree: true,
  handler: async (_args, hub) => statsView(await hub.memory.get(), hub.kg.get(), hubStatus(hub)),
});

export const taxonomyTool = defineTool({
  name: 'palace_get_taxonomy',
  title: 'Taxonomy',
  description: 'The whole palace layout: wing → room → drawer count (declared empty rooms show 0).',
  input: {},
  mutating: false,
  lockFree: true,
  handler: async (_args, hub) => ({ taxonomy: await taxonomy(await hub.memory.get(), palaceOf(hub)) }),
});

export const roomsListTool = defineTool({
  name: 'palace_rooms_list',
  title: 'List rooms',
  description: 'Rooms (optionally of one wing) with drawer counts and whether they were declared.',
  input: { wing: z.string().optional() },
  mutating: false,
  lockFree: true,
  handler: async (args, hub) => listRooms(await hub.memory.get(), palaceOf(hub), args.wing),
});

export const roomsAddTool = defineTool({
  name: 'palace_rooms_add',
  title: 'Add a room',
  description: 'Declare a room in a wing before filing into it (filing into a new room also creates it).',
  input: { wing: z.string(), room: z.string() },
  mutating: true,
  lockFree: false,
  handler: (args, hub) => addRoom(palaceOf(hub), args),
});

export const roomsRenameTool = defineTool({
  name: 'palace_rooms_rename',
  title: 'Rename a room',
  description: 'Rename a room within its wing; its drawers move with it (their content never changes).',
  input: { wing: z.string(), room: z.string(), new_room: z.string() },
  mutating: true,
  lockFree: false,
  handler: async (args, hub) => renameRoom(await hub.memory.get(), palaceOf(hub), args),
});

export const roomsRemoveTool = defineTool({
  name: 'palace_rooms_remove',
  title: 'Remove a room',
  description: 'Remove a declared, empty room. A room that still holds drawers is refused: move or delete them first.',
  input: { wing: z.string(), room: z.string() },
  mutating: true,
  lockFree: false,
  handler: async (args, hub) => removeRoom(await hub.memory.get(), palaceOf(hub), args),
});

export const palaceTools = [listDrawersTool, graphStatsTool, statsTool, taxonomyTool, roomsListTool, roomsAddTool, roomsRenameTool, roomsRemoveTool];
