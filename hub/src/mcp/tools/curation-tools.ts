// Curation tools: checkpoint (several memories + a diary entry in one call), bulk move, purge,
// prune by age, rename-wing, and export/import pages. The bulk writers preview unless told
// otherwise (dry_run defaults to true, except rename-wing which mirrors its CLI command).

import { z } from 'zod';

import { bulkMove, prune, purge, renameWing } from '../../memory/curation/bulk-ops.js';
import { checkpoint } from '../../memory/drawers/checkpoint.js';
import { MEMORY_LIMITS } from '../../memory/drawers/drawer-input.js';
import { exportPage, IMPORT_BATCH_MAX, importBatch } from '../../memory/curation/transfer.js';
import { canonicalPalace } from '../../registration.js';
import { listOf } from './list-input.js';
import { defineTool } from './tool.js';
import { writerOf } from '../../memory/drawers/identity.js';

const item = z
  .object({
    wing: z.string().optional().describe('Project or person'),
    room: z.string().optional().describe('Topic within the wing'),
    content: z.string().optional().describe('The exact text to keep (verbatim)'),
    tags: listOf(z.string(), MEMORY_LIMITS.tags).optional(),
    source_file: z.string().optional(),
  })
  .passthrough();

export const checkpointTool = defineTool({
  name: 'palace_checkpoint',
  title: 'Checkpoint memories',
  description:
    'File several memories (and optionally one diary entry) in one call, e.g. at the end of a task. Each item is checked like palace_add_drawer: near-duplicates of stored drawers or of earlier items in the same call (similarity ≥ dedup_threshold, default 0.9) are reported in duplicates, bad or credential-looking items in errors (by index); the others are filed. dry_run reports what would happen and writes nothing.',
  input: {
    items: listOf(item, 200).describe('Memories to file: {wing, room, content, tags?, source_file?}'),
    diary: z
      .object({ agent: z.string().optional(), entry: z.string(), topic: z.string().optional(), wing: z.string().optional() })
      .optional()
      .describe('A diary entry to write in the same call (agent defaults to PALACE_AGENT_NAME of the hub)'),
    dedup_threshold: z.number().gt(0).max(1).optional().describe('Similarity at or above which an item is a duplicate (default 0.9)'),
    dry_run: z.boolean().optional().describe('Check everything, write nothing'),
    created_by: z.string().optional().describe('Your agent name (added_by is an alias)'),
    added_by: z.string().optional().describe('Alias of created_by'),
  },
  mutating: true,
  lockFree: false,
  handler: async (args, hub) => checkpoint(await hub.memory.get(), { ...args, added_by: writerOf(args, 'created_by', 'added_by') }, hub.config.agentName),
});

export const bulkMoveTool = defineTool({
  name: 'palace_bulk_move',
  title: 'Move drawers in bulk',
  description:
    'Move every drawer matching the selectors (from_wing, from_room, source_file, tags, ids; all given must hold) to to_wing and/or to_room. Whole drawers move (all chunks together); content never changes; the old placement is kept in metadata.placement_history. Previews unless dry_run is false.',
  input: {
    from_wing: z.string().optional(),
    from_room: z.string().optional(),
    source_file: z.string().optional().describe('Exact source file path'),
    tags: listOf(z.string(), MEMORY_LIMITS.tags).optional().describe('Drawers with any of these tags'),
    ids: listOf(z.string(), 5000).optional().describe('Drawer ids (a chunk id selects its whole drawer)'),
    to_wing: z.string().optional(),
    to_room: z.string().optional(),
    dry_run: z.boolean().optional().describe('Default true: only report what would move'),
  },
  mutating: true,
  lockFree: false,
  handler: async (args, hub) => bulkMove(await hub.memory.get(), args),
});

export const purgeTool = defineTool({
  name: 'palace_purge',
  title: 'Purge drawers',
  description: 'Delete every drawer from a source file and/or in a wing or room (at least one filter). Previews unless dry_run is false.',
  input: {
    source_file: z.string().optional().describe('Exact source file path'),
    wing: z.string().optional(),
    room: z.string().optional(),
    dry_run: z.boolean().optional().describe('Default true: only report what would be deleted'),
  },
  mutating: true,
  lockFree: false,
  handler: async (args, hub) => purge(await hub.memory.get(), args),
});

export const pruneTool = defineTool({
  name: 'palace_prune',
  title: 'Prune stale drawers',
  description:
    'Delete drawers filed more than stale_days ago (optionally in one wing/room). A drawer with no parseable filed_at is never pruned (reported as skipped). Previews unless dry_run is false.',
  input: {
    stale_days: z.number().int().min(1).describe('Age in days past which a drawer is stale'),
    wing: z.string().optional(),
    room: z.string().optional(),
    dry_run: z.boolean().optional().describe('Default true: only report what would be pruned'),
  },
  mutating: true,
  lockFree: false,
  handler: async (args, hub) => prune(await hub.memory.get(), args),
});

export const renameWingTool = defineTool({
  name: 'palace_rename_wing',
  title: 'Rename a wing',
  description:
    'Move every drawer of a wing (diary entries included) and its declared rooms to a new wing name, merging into it if it exists. Content never changes; the old placement is kept in metadata.placement_history.',
  input: { wing: z.string(), new_wing: z.string(), dry_run: z.boolean().optional().describe('Only report what would move') },
  mutating: true,
  lockFree: false,
  handler: async (args, hub) => renameWing(await hub.memory.get(), canonicalPalace(hub.config.palacePath), args),
});

export const exportTool = defineTool({
  name: 'palace_export',
  title: 'Export a page',
  description:
    "One page of the palace as portable rows (verbatim content and metadata, no vectors): part 'drawers' (optionally one wing) or 'kg' facts. Page on with next_offset. `palace export` writes these as Markdown and JSONL.",
  input: {
    part: z.enum(['drawers', 'kg']).optional(),
    wing: z.string().optional(),
    offset: z.number().int().min(0).optional(),
    limit: z.number().int().min(1).max(1000).optional().describe('Rows per page (default 500)'),
  },
  mutating: false,
  lockFree: true,
  handler: async (args, hub) => exportPage(await hub.memory.get(), hub.kg.get(), args),
});

export const importTool = defineTool({
  name: 'palace_import',
  title: 'Import exported rows',
  description:
    'File exported drawer rows and KG facts as they were (ids, placement, metadata, filed_at kept; content re-embedded). Rows already present are skipped, so re-importing changes nothing; rows that break the filing rules (credentials included) are refused one by one.',
  input: {
    drawers: listOf(z.record(z.string(), z.unknown()), IMPORT_BATCH_MAX).optional(),
    kg_facts: listOf(z.record(z.string(), z.unknown()), IMPORT_BATCH_MAX).optional(),
  },
  mutating: true,
  lockFree: false,
  handler: async (args, hub) => importBatch(await hub.memory.get(), hub.kg.get(), args),
});

export const curationTools = [checkpointTool, bulkMoveTool, purgeTool, pruneTool, renameWingTool, exportTool, importTool];
