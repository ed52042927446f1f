// Navigation tools: tunnels (explicit and inferred), hallways, traverse, walk, wing overlap, why a
// drawer sits where it does, and the AAAK dialect (spec + compress). Logic (and input validation,
// with errors naming the field) lives in hub/src/memory/; schemas stay loose so those errors reach callers.

import { z } from 'zod';

import { AAAK_SPEC, AAAK_VERSION } from '../../memory/curation/aaak.js';
import { compress } from '../../memory/curation/compress.js';
import { deleteHallway, HALLWAY_DEFAULTS, listHallways } from '../../memory/navigation/hallways.js';
import { wingOverlap } from '../../memory/curation/overlap.js';
import { traverse, walkPalace, WALK_LIMITS } from '../../memory/navigation/palace-walk.js';
import { createTunnel, deleteTunnel, listTunnels } from '../../memory/navigation/tunnels.js';
import { whyDrawer } from '../../mine/why.js';
import { canonicalPalace } from '../../registration.js';
import type { HubServices } from '../../services.js';
import { defineTool } from './tool.js';
import { writerOf } from '../../memory/drawers/identity.js';

/** KG entities a hallway or overlap may be about (the most-connected ones). */
const ENTITY_NAMES = 500;

const palaceOf = (hub: HubServices): string => canonicalPalace(hub.config.palacePath);
const entityNames = (hub: HubServices): string[] => hub.kg.get().topEntities(ENTITY_NAMES).map((e) => e.name);

export const listTunnelsTool = defineTool({
  name: 'palace_list_tunnels',
  title: 'List tunnels',
  description:
    'Tunnels link rooms of different wings. kind explicit: declared with palace_create_tunnel; kind inferred (passive): a room name shared by two or more wings, most-connected first. Optionally only those touching one wing, or one kind.',
  input: { wing: z.string().optional(), kind: z.string().optional().describe("'all' (default), 'explicit' or 'inferred'") },
  mutating: false,
  lockFree: true,
  handler: async (args, hub) => listTunnels(await hub.memory.get(), palaceOf(hub), args),
});

export const createTunnelTool = defineTool({
  name: 'palace_create_tunnel',
  title: 'Create a tunnel',
  description:
    'Declare an explicit tunnel between a room of one wing and a room of another (both must exist), e.g. the same feature in two projects. Creating it again returns the existing tunnel (a new label replaces the old).',
  input: {
    source_wing: z.string(),
    source_room: z.string(),
    target_wing: z.string(),
    target_room: z.string(),
    label: z.string().optional().describe('What links them'),
    created_by: z.string().optional().describe('Your agent name'),
    added_by: z.string().optional().describe('Alias of created_by'),
  },
  mutating: true,
  lockFree: false,
  handler: async (args, hub) => createTunnel(await hub.memory.get(), palaceOf(hub), { ...args, created_by: writerOf(args, 'created_by', 'added_by') }),
});

export const deleteTunnelTool = defineTool({
  name: 'palace_delete_tunnel',
  title: 'Delete a tunnel',
  description: 'Delete an explicit tunnel by id. Inferred tunnels follow the room names and cannot be deleted.',
  input: { tunnel_id: z.string().describe('tunnel_<16 hex>') },
  mutating: true,
  lockFree: false,
  handler: (args, hub) => deleteTunnel(palaceOf(hub), args),
});

export const listHallwaysTool = defineTool({
  name: 'palace_list_hallways',
  title: 'List hallways',
  description:
    'Hallways join two rooms of one wing whose drawers mention the same entities (names, tags, KG entities) at least min_count times; label = the strongest shared terms. Strongest first, paged.',
  input: {
    wing: z.string().optional(),
    limit: z.number().optional().describe(`1-${HALLWAY_DEFAULTS.maxLimit}, default ${HALLWAY_DEFAULTS.limit}`),
    offset: z.number().optional().describe('rows to skip'),
    min_count: z.number().optional().describe(`shared mentions needed, default ${HALLWAY_DEFAULTS.minCount}`),
  },
  mutating: false,
  lockFree: true,
  handler: async (args, hub) => listHallways(await hub.memory.get(), palaceOf(hub), entityNames(hub), args),
});

export const deleteHallwayTool = defineTool({
  name: 'palace_delete_hallway',
  title: 'Delete a hallway',
  description: 'Delete a hallway by id; it is remembered as deleted and never inferred again. Drawers are not touched.',
  input: { hallway_id: z.string().describe('hallway_<16 hex>') },
  mutating: true,
  lockFree: false,
  handler: async (args, hub) => deleteHallway(await hub.memory.get(), palaceOf(hub), entityNames(hub), args),
});

export const traverseTool = defineTool({
  name: 'palace_traverse',
  title: 'Traverse from a room',
  description: `Rooms reachable from start_room (in every wing holding it, or only in wing) through hallways and tunnels, each with its hop count and what connected it. max_hops 1-${WALK_LIMITS.maxHops}, default ${WALK_LIMITS.defaultHops}.`,
  input: {
    start_room: z.string(),
    wing: z.string().optional(),
    max_hops: z.number().optional().describe(`1-${WALK_LIMITS.maxHops}, default ${WALK_LIMITS.defaultHops}`),
  },
  mutating: false,
  lockFree: true,
  handler: async (args, hub) => traverse(await hub.memory.get(), palaceOf(hub), entityNames(hub), args),
});

export const walkPalaceTool = defineTool({
  name: 'palace_walk_palace',
  title: 'Walk the palace',
  description: `A tree walked from a room (wing + room), every room of a wing, or a room name in every wing. follow palace: through hallways and tunnels; follow tunnels: tunnels only. depth 0-${WALK_LIMITS.maxDepth}, default ${WALK_LIMITS.defaultDepth}. A room reached twice is shown with seen true and not expanded again.`,
  input: {
    wing: z.string().optional(),
    room: z.string().optional(),
    follow: z.string().optional().describe("'palace' (hallways and tunnels, default) or 'tunnels'"),
    depth: z.number().optional().describe(`0-${WALK_LIMITS.maxDepth}, default ${WALK_LIMITS.defaultDepth}`),
  },
  mutating: false,
  lockFree: true,
  handler: async (args, hub) => walkPalace(await hub.memory.get(), palaceOf(hub), entityNames(hub), args),
});

export const wingOverlapTool = defineTool({
  name: 'palace_wing_overlap',
  title: 'Wing overlap',
  description:
    'What wings share: room names, tags, entities. With wing_a and wing_b: the full view including near-duplicate drawers across them (cosine ≥ 0.9). With wing_a only: its pairs; with neither: every pair, ranked.',
  input: { wing_a: z.string().optional(), wing_b: z.string().optional() },
  mutating: false,
  lockFree: true,
  handler: async (args, hub) => wingOverlap(await hub.memory.get(), entityNames(hub), args),
});

export const whyTool = defineTool({
  name: 'palace_why',
  title: 'Why is this drawer here',
  description:
    'Why a drawer sits in its wing and room: how they were chosen (mined: folder name and sub-folder or transcript format; diary; filed by an agent), every move since, provenance (source_file, filed_at, created_by, tags), and the tunnels and hallways touching its room.',
  input: { drawer_id: z.string().describe('drawer_<24 hex>') },
  mutating: false,
  lockFree: true,
  handler: async (args, hub) => whyDrawer(await hub.memory.get(), palaceOf(hub), entityNames(hub), args.drawer_id),
});

export const aaakSpecTool = defineTool({
  name: 'palace_get_aaak_spec',
  title: 'AAAK dialect',
  description: 'The AAAK compact summary dialect: how to read the summaries palace compress writes beside drawers (lossy; quote the drawer itself).',
  input: {},
  mutating: false,
  lockFree: true,
  handler: () => ({ aaak_spec: AAAK_SPEC, version: AAAK_VERSION }),
});

export const compressTool = defineTool({
  name: 'palace_compress',
  title: 'Compress to AAAK',
  description:
    'Write one AAAK summary per drawer (optionally of one wing/room) beside the drawers in <palace>/aaak.json. Never changes drawer content; re-running rewrites only changed summaries. dry_run reports without writing.',
  input: { wing: z.string().optional(), room: z.string().optional(), dry_run: z.boolean().optional() },
  mutating: true,
  lockFree: false,
  handler: async (args, hub) => compress(await hub.memory.get(), palaceOf(hub), args),
});

export const navigationTools = [
  listTunnelsTool,
  createTunnelTool,
  deleteTunnelTool,
  listHallwaysTool,
  deleteHallwayTool,
  traverseTool,
  walkPalaceTool,
  wingOverlapTool,
  whyTool,
  aaakSpecTool,
  compressTool,
];
