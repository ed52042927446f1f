// Which module defines each tool, loadable one module at a time: a process that runs a single tool
// (the CLI with no hub, in-process) loads that tool's module only, not all 64 tools' schemas.
// test/unit/tool-groups.test.ts checks this table against the registry (registry.ts).

import type { ToolName } from '../contract.js';
import type { ToolDef } from './tool.js';

type Load = () => Promise<readonly ToolDef[]>;
const list = (tools: unknown): readonly ToolDef[] => (Array.isArray(tools) ? tools : [tools]) as readonly ToolDef[];

/** Each tool module, as a loader of the tools it defines (registry.ts lists them all, in this order). */
export const TOOL_GROUPS = {
  logstream: async () => list((await import('./logstream-tools.js')).logstreamTools),
  coordination: async () => list((await import('./coordination-tools.js')).coordinationTools),
  identity: async () => list((await import('./identity-tools.js')).identityTools),
  memory: async () => list((await import('./memory-tools.js')).memoryTools),
  mine: async () => list((await import('./mine-tools.js')).mineTools),
  status: async () => list((await import('./status-tool.js')).statusTool),
  mesh: async () => list((await import('./mesh-tools.js')).meshPeersTool),
  kg: async () => list((await import('./kg-tools.js')).kgTools),
  diary: async () => list((await import('./diary-tools.js')).diaryTools),
  palace: async () => list((await import('./palace-tools.js')).palaceTools),
  curation: async () => list((await import('./curation-tools.js')).curationTools),
  navigation: async () => list((await import('./navigation-tools.js')).navigationTools),
} satisfies Record<string, Load>;

export type ToolGroup = keyof typeof TOOL_GROUPS;

/** Tool name -> the group (module) that defines it; typed by the wire contract, so it names every tool, once. */
export const TOOL_GROUP_OF: Readonly<Record<ToolName, ToolGroup>> = {
  palace_event_append: 'logstream',
  palace_event_list: 'logstream',
  palace_event_wait: 'logstream',
  palace_event_ack: 'logstream',
  palace_artifact_put: 'logstream',
  palace_artifact_get: 'logstream',
  palace_patch_submit: 'logstream',
  palace_tasks: 'logstream',
  palace_task_renew: 'coordination',
  palace_task_release: 'coordination',
  palace_task_ready: 'coordination',
  palace_reserve: 'coordination',
  palace_reservations: 'coordination',
  palace_release: 'coordination',
  palace_agents: 'identity',
  palace_agent_retire: 'identity',
  palace_search: 'memory',
  palace_add_drawer: 'memory',
  palace_add_drawers: 'memory',
  palace_get_drawer: 'memory',
  palace_update_drawer: 'memory',
  palace_delete_drawer: 'memory',
  palace_check_duplicate: 'memory',
  palace_rate_memory: 'memory',
  palace_list_wings: 'memory',
  palace_list_tags: 'memory',
  palace_mine: 'mine',
  palace_mined: 'mine',
  palace_repair_status: 'mine',
  palace_status: 'status',
  palace_mesh_peers: 'mesh',
  palace_kg_add: 'kg',
  palace_kg_query: 'kg',
  palace_kg_invalidate: 'kg',
  palace_kg_supersede: 'kg',
  palace_kg_timeline: 'kg',
  palace_kg_stats: 'kg',
  palace_diary_write: 'diary',
  palace_diary_read: 'diary',
  palace_wakeup: 'diary',
  palace_list_drawers: 'palace',
  palace_graph_stats: 'palace',
  palace_stats: 'palace',
  palace_get_taxonomy: 'palace',
  palace_rooms_list: 'palace',
  palace_rooms_add: 'palace',
  palace_rooms_rename: 'palace',
  palace_rooms_remove: 'palace',
  palace_checkpoint: 'curation',
  palace_bulk_move: 'curation',
  palace_purge: 'curation',
  palace_prune: 'curation',
  palace_rename_wing: 'curation',
  palace_export: 'curation',
  palace_import: 'curation',
  palace_list_tunnels: 'navigation',
  palace_create_tunnel: 'navigation',
  palace_delete_tunnel: 'navigation',
  palace_list_hallways: 'navigation',
  palace_delete_hallway: 'navigation',
  palace_traverse: 'navigation',
  palace_walk_palace: 'navigation',
  palace_wing_overlap: 'navigation',
  palace_why: 'navigation',
  palace_get_aaak_spec: 'navigation',
  palace_compress: 'navigation',
};

/** The named tools, loading only the modules that define them; unknown names are left out. */
export async function loadTools(names: readonly string[]): Promise<readonly ToolDef[]> {
  const groupOf: Readonly<Record<string, ToolGroup | undefined>> = TOOL_GROUP_OF;
  const groups = [...new Set(names.flatMap((name) => groupOf[name] ?? []))];
  const loaded = await Promise.all(groups.map((group) => TOOL_GROUPS[group]()));
  return loaded.flat().filter((tool) => names.includes(tool.name));
}
