// Knowledge-graph tools: state, query, close and supersede temporal facts, and page a timeline.
// Facts are never deleted; a changed fact is the old one closed plus the new one opened.

import { z } from 'zod';

import { KG_TIMELINE_MAX } from '../../kg/knowledge-graph.js';
import { defineTool } from './tool.js';
import { writerOf } from '../../memory/drawers/identity.js';

const when = (what: string) => z.string().describe(`${what}: a date (YYYY-MM-DD) or an ISO 8601 instant`);

export const kgAddTool = defineTool({
  name: 'palace_kg_add',
  title: 'Add a fact',
  description:
    'State a fact as a triple subject —predicate→ object (e.g. "alice" "works_on" "palace"), optionally with entity types and validity dates. An identical fact that is still open is returned instead of being added twice. When a fact CHANGES, use palace_kg_supersede (or invalidate the old one, then add the new one).',
  input: {
    subject: z.string(),
    predicate: z.string().describe('Relationship, e.g. works_on, prefers, uses (stored lower_snake_case)'),
    object: z.string(),
    subject_type: z.string().optional().describe('person, project, tool, …'),
    object_type: z.string().optional(),
    valid_from: when('Start of validity (default: always)').optional(),
    valid_to: when('End of validity (a date covers that whole day)').optional(),
    confidence: z.number().min(0).max(1).optional(),
    source_file: z.string().optional(),
    source_drawer_id: z.string().optional(),
    created_by: z.string().optional().describe('Your agent name (added_by is an alias)'),
    added_by: z.string().optional().describe('Alias of created_by'),
  },
  mutating: true,
  lockFree: false,
  handler: (args, hub) => hub.kg.get().add({ ...args, added_by: writerOf(args, 'created_by', 'added_by') }),
});

export const kgQueryTool = defineTool({
  name: 'palace_kg_query',
  title: 'Query facts about an entity',
  description:
    'Facts touching an entity. With as_of, only the facts valid at that time (a date means the end of that day); without it, every fact, each marked current true/false.',
  input: {
    entity: z.string(),
    as_of: when('Point in time').optional(),
    direction: z.enum(['outgoing', 'incoming', 'both']).optional().describe('outgoing = entity is the subject; default both'),
  },
  mutating: false,
  lockFree: true,
  handler: (args, hub) => hub.kg.get().query(args),
});

export const kgInvalidateTool = defineTool({
  name: 'palace_kg_invalidate',
  title: 'Close a fact',
  description: 'Mark a fact as no longer true from `ended` (default now). The fact is kept with its valid_to, so as-of queries before that time still see it.',
  input: {
    subject: z.string(),
    predicate: z.string(),
    object: z.string(),
    ended: when('When it stopped being true (default now)').optional(),
  },
  mutating: true,
  lockFree: false,
  handler: (args, hub) => hub.kg.get().invalidate(args),
});

export const kgSupersedeTool = defineTool({
  name: 'palace_kg_supersede',
  title: 'Change a fact',
  description:
    'Atomically replace subject —predicate→ old_object with subject —predicate→ new_object at one instant `at` (default now): the old fact ends exactly where the new one starts.',
  input: {
    subject: z.string(),
    predicate: z.string(),
    old_object: z.string(),
    new_object: z.string(),
    at: when('The boundary (a date means 00:00Z that day)').optional(),
    object_type: z.string().optional(),
    created_by: z.string().optional().describe('Your agent name (added_by is an alias)'),
    added_by: z.string().optional().describe('Alias of created_by'),
  },
  mutating: true,
  lockFree: false,
  handler: (args, hub) => hub.kg.get().supersede({ ...args, added_by: writerOf(args, 'created_by', 'added_by') }),
});

export const kgTimelineTool = defineTool({
  name: 'palace_kg_timeline',
  title: 'Timeline of facts',
  description: `Facts in chronological order of valid_from, for one entity or all, up to as_of. At most ${KG_TIMELINE_MAX} rows per call: pass next_cursor back as cursor to read on.`,
  input: {
    entity: z.string().optional(),
    as_of: when('Only facts that had started by then').optional(),
    limit: z.number().int().min(1).max(KG_TIMELINE_MAX).optional(),
    cursor: z.string().optional().describe('next_cursor from the previous page'),
  },
  mutating: false,
  lockFree: true,
  handler: (args, hub) => hub.kg.get().timeline(args),
});

export const kgStatsTool = defineTool({
  name: 'palace_kg_stats',
  title: 'Knowledge-graph statistics',
  description: 'Entities, triples, current and expired facts, and facts per relationship type.',
  input: {},
  mutating: false,
  lockFree: true,
  handler: (_args, hub) => hub.kg.get().stats(),
});

export const kgTools = [kgAddTool, kgQueryTool, kgInvalidateTool, kgSupersedeTool, kgTimelineTool, kgStatsTool];
