// Memory tools: file verbatim drawers, search them (hybrid), fetch, rate, relocate, delete, and
// list wings and tags. Writes run under the hub's request lock; reads run beside them.

import { z } from 'zod';

import { HubError } from '../../errors.js';
import { bindNested } from '../../identity/bind-nested.js';
import { MEMORY_LIMITS } from '../../memory/drawers/drawer-input.js';
import { listOf } from './list-input.js';
import { defineTool } from './tool.js';
import { checkIdentityArgs, writerOf } from '../../memory/drawers/identity.js';

const tagsInput = () => listOf(z.string(), MEMORY_LIMITS.tags);

const place = (what: string) => z.string().describe(what);

export const searchTool = defineTool({
  name: 'palace_search',
  title: 'Search memory',
  description:
    'Semantic + keyword (hybrid) search over the palace. Use it BEFORE answering about past work, decisions or preferences, and quote the returned content verbatim. Results carry wing, room, source_file, score and similarity; a hit from a mined file carries mined {sha256, at} and stale: true when the file changed since (re-mine it). The same query gives the same order at any limit. A long pasted prompt is reduced to its question (sanitized_query shows what was searched).',
  input: {
    query: z.string().describe('What you want to know, in plain words (ideally one question)'),
    wing: place('Only this wing (project or person)').optional(),
    room: place('Only this room (topic)').optional(),
    tags: tagsInput().optional().describe(`Only drawers with any of these tags (at most ${MEMORY_LIMITS.tags})`),
    source_file: z.string().optional().describe('Only drawers mined from this exact file path'),
    limit: z.number().int().min(1).max(100).optional().describe('How many results (default 5, max 100)'),
    mode: z.enum(['hybrid', 'vector', 'text']).optional().describe('hybrid (default), vector only, or keyword only'),
  },
  mutating: false,
  lockFree: true,
  handler: async (args, hub) => (await hub.memory.get()).search(args),
});

export const addDrawerTool = defineTool({
  name: 'palace_add_drawer',
  title: 'File a memory',
  description:
    'File verbatim content in a wing (project or person) and room (topic) for future sessions: decisions, outcomes of delegated tasks, conventions, facts. Never file secrets (credentials are refused). A near-duplicate of an existing drawer (cosine ≥ 0.9) is not filed again: the result names it in duplicate_of; pass force true to file anyway.',
  input: {
    wing: place('Project or person the memory belongs to'),
    room: place('Topic within the wing, e.g. decisions, architecture, outcomes'),
    content: z.string().describe('The exact text to keep; it is stored verbatim'),
    tags: tagsInput().optional().describe(`Short lowercase tags (at most ${MEMORY_LIMITS.tags})`),
    source_file: z.string().optional().describe('File the content came from, if any'),
    created_by: z.string().optional().describe('Your agent name (added_by is an alias)'),
    added_by: z.string().optional().describe('Alias of created_by'),
    force: z.boolean().optional().describe('File even if a near-duplicate exists'),
  },
  mutating: true,
  lockFree: false,
  // Embedded outside the request lock; concurrent calls share embedding batches and one group commit.
  stepLocked: true,
  handler: async (args, hub, ctx) =>
    (await hub.memory.get()).addDrawer(
      { ...args, added_by: writerOf(args, 'created_by', 'added_by') },
      ctx.withLock ? { step: ctx.withLock } : {},
    ),
});

/** Drawers per palace_add_drawers call. */
export const ADD_DRAWERS_MAX = 100;

export const addDrawersTool = defineTool({
  name: 'palace_add_drawers',
  title: 'File several memories',
  description: `File up to ${ADD_DRAWERS_MAX} drawers (1 MiB of content in all) in one call, each exactly as palace_add_drawer would (same limits, secret refusal and near-duplicate check, also against the drawers before it in the list). They are embedded in shared batches and written in one commit. Returns one result per item, in order: the palace_add_drawer result, or { error } for an item that was refused (the others are still filed).`,
  input: {
    items: z
      .array(
        z.object({
          wing: place('Project or person the memory belongs to'),
          room: place('Topic within the wing'),
          content: z.string().describe('The exact text to keep; it is stored verbatim'),
          tags: tagsInput().optional(),
          source_file: z.string().optional(),
          created_by: z.string().optional().describe('Your agent name (added_by is an alias)'),
          added_by: z.string().optional(),
          force: z.boolean().optional(),
        }),
      )
      .min(1)
      .max(ADD_DRAWERS_MAX)
      .describe(`1 to ${ADD_DRAWERS_MAX} drawers`),
  },
  mutating: true,
  lockFree: false,
  stepLocked: true,
  handler: async (args, hub, ctx) => {
    const bytes = args.items.reduce((n, item) => n + Buffer.byteLength(item.content, 'utf8'), 0);
    if (bytes > MEMORY_LIMITS.contentBytes)
      throw new HubError('input.too_large', `the items' content totals ${bytes} bytes, over ${MEMORY_LIMITS.contentBytes} per call; send fewer per call`, { field: 'items' });
    // Each item names its own writer: bound to the caller like a top-level identity field (an agent
    // files only as itself, unnamed items are filled in), all before anything is written.
    const identity = new Set(['created_by', 'added_by']);
    const items = args.items.map((item, i) => {
      checkIdentityArgs(`palace_add_drawers items[${i}]`, identity, item);
      const bound = bindNested(hub.identity, 'palace_add_drawers', `items[${i}]`, identity, item, ctx.caller);
      return { ...bound, added_by: writerOf(bound, 'created_by', 'added_by') };
    });
    const memory = await hub.memory.get();
    const options = ctx.withLock ? { step: ctx.withLock } : {};
    const results = (await memory.addDrawers(items, options)).map((r) => (r instanceof Error ? { error: r.toJSON() } : r));
    return { filed: results.filter((r) => 'filed' in r && r.filed).length, results };
  },
});

export const getDrawerTool = defineTool({
  name: 'palace_get_drawer',
  title: 'Get a drawer',
  description: 'Fetch one drawer by id with its verbatim content and provenance (wing, room, source_file, filed_at, created_by, rating). added_by repeats created_by for one release (deprecated).',
  input: { drawer_id: z.string().describe('drawer_<24 hex>') },
  mutating: false,
  lockFree: true,
  handler: async (args, hub) => (await hub.memory.get()).getDrawer(args.drawer_id),
});

export const updateDrawerTool = defineTool({
  name: 'palace_update_drawer',
  title: 'Move or retag a drawer',
  description: 'Move a drawer to another wing or room, or replace its tags. The verbatim content never changes.',
  input: {
    drawer_id: z.string(),
    wing: z.string().optional(),
    room: z.string().optional(),
    tags: tagsInput().optional(),
  },
  mutating: true,
  lockFree: false,
  handler: async (args, hub) => (await hub.memory.get()).relocate(args.drawer_id, args),
});

export const deleteDrawerTool = defineTool({
  name: 'palace_delete_drawer',
  title: 'Delete a drawer',
  description: 'Delete a drawer (all chunks of a long one). Prefer rating it not useful unless it is wrong or harmful.',
  input: { drawer_id: z.string() },
  mutating: true,
  lockFree: false,
  handler: async (args, hub) => (await hub.memory.get()).deleteDrawer(args.drawer_id),
});

export const checkDuplicateTool = defineTool({
  name: 'palace_check_duplicate',
  title: 'Check for a duplicate',
  description: 'Before filing, check whether near-identical content is already in the palace (cosine similarity ≥ threshold, default 0.9).',
  input: {
    content: z.string(),
    threshold: z.number().gt(0).max(1).optional().describe('Similarity threshold (default 0.9)'),
  },
  mutating: false,
  lockFree: true,
  handler: async (args, hub) => (await hub.memory.get()).checkDuplicate(args),
});

export const rateMemoryTool = defineTool({
  name: 'palace_rate_memory',
  title: 'Rate a memory',
  description: 'Say whether a drawer helped (useful true) or misled (false). Not-useful drawers rank lower in search but never disappear.',
  input: { drawer_id: z.string(), useful: z.boolean() },
  mutating: true,
  lockFree: false,
  handler: async (args, hub) => (await hub.memory.get()).rate(args.drawer_id, args.useful),
});

export const listWingsTool = defineTool({
  name: 'palace_list_wings',
  title: 'List wings',
  description: 'Wings (projects and people) in the palace with their drawer counts.',
  input: {},
  mutating: false,
  lockFree: true,
  handler: async (_args, hub) => (await hub.memory.get()).listWings(),
});

export const listTagsTool = defineTool({
  name: 'palace_list_tags',
  title: 'List tags',
  description: 'Tags in use with their counts, optionally within a wing or room.',
  input: {
    wing: z.string().optional(),
    room: z.string().optional(),
    min_count: z.number().int().min(1).optional(),
  },
  mutating: false,
  lockFree: true,
  handler: async (args, hub) => (await hub.memory.get()).listTags(args),
});

export const memoryTools = [
  searchTool,
  addDrawerTool,
  addDrawersTool,
  getDrawerTool,
  updateDrawerTool,
  deleteDrawerTool,
  checkDuplicateTool,
  rateMemoryTool,
  listWingsTool,
  listTagsTool,
];
