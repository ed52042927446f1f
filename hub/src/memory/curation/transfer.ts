// Export and import of a palace's drawers and knowledge-graph facts as portable rows (no vectors).
// The hub only hands out pages and takes batches; the CLI reads and writes the files, so no tool
// ever writes to a path a client names.
//
// Decisions: rows are exported per stored row (a chunked drawer is several rows sharing parent_id),
// so an import rebuilds exactly what was stored. Import keeps ids, placement, tags, metadata, rating
// and filed_at verbatim (even an unparseable filed_at: such a drawer is then never pruned), re-embeds
// content with this palace's embedder, skips ids already present (re-import changes nothing) and
// refuses, row by row, content that fails the filing rules (credentials included).

import { invalid, toHubError } from '../../errors.js';
import { drawerContent, drawerId, placeName, tagList } from '../drawers/drawer-input.js';
import type { KnowledgeGraph } from '../../kg/knowledge-graph.js';
import type { Memory, PortableDrawer } from '../drawers/memory.js';
import { boundedInt } from '../navigation/palace-views.js';

/** Format tag written in every export manifest and accepted by import. */
export const EXPORT_FORMAT = 'palace-export/1';
export const EXPORT_PAGE_MAX = 1000;
export const IMPORT_BATCH_MAX = 2000;

/** One page of an export: drawer rows or KG facts, with the offset of the next page. */
export async function exportPage(memory: Memory, kg: KnowledgeGraph, raw: { part?: unknown; wing?: unknown; offset?: unknown; limit?: unknown }) {
  const part = raw.part ?? 'drawers';
  if (part !== 'drawers' && part !== 'kg') throw invalid('part', "part must be 'drawers' or 'kg'");
  const offset = boundedInt('offset', raw.offset, 0, 0, Number.MAX_SAFE_INTEGER);
  const limit = boundedInt('limit', raw.limit, 500, 1, EXPORT_PAGE_MAX);
  if (part === 'kg') {
    const { facts, total } = kg.exportFacts(offset, limit);
    return { format: EXPORT_FORMAT, part, total, offset, next_offset: offset + facts.length < total ? offset + facts.length : null, facts };
  }
  const wing = raw.wing === undefined || raw.wing === null || raw.wing === '' ? undefined : placeName('wing', raw.wing);
  const filter = wing ? { wing } : {};
  const total = await memory.countDrawers(filter);
  const rows = await memory.scanDrawers(filter, { offset, limit });
  const drawers: PortableDrawer[] = rows.map((d) => ({
    id: d.drawer_id,
    wing: d.wing,
    room: d.room,
    tags: d.tags,
    content: d.content,
    source_file: d.source_file,
    chunk_index: d.chunk_index,
    parent_id: d.parent_id,
    filed_at: d.filed_at,
    added_by: d.added_by,
    useful: d.useful,
    metadata: d.metadata,
  }));
  return {
    format: EXPORT_FORMAT,
    part,
    wing: wing ?? null,
    embedder: memory.embedderInfo(),
    total,
    offset,
    next_offset: offset + drawers.length < total ? offset + drawers.length : null,
    drawers,
  };
}

function text(field: string, raw: unknown, max: number, fallback: string): string {
  if (raw === undefined || raw === null) return fallback;
  if (typeof raw !== 'string' || raw.length > max) throw invalid(field, `${field} must be a string of at most ${max} characters`);
  return raw;
}

/** One exported row checked against the filing rules; throws a HubError naming the field. */
export function portableDrawer(raw: unknown): PortableDrawer {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw invalid('drawers', 'each drawer row must be an object');
  const r = raw as Record<string, unknown>;
  const chunkIndex = r.chunk_index ?? 0;
  if (typeof chunkIndex !== 'number' || !Number.isInteger(chunkIndex) || chunkIndex < 0) throw invalid('chunk_index', 'chunk_index must be a whole number ≥ 0');
  if (r.useful !== undefined && r.useful !== null && typeof r.useful !== 'boolean') throw invalid('useful', 'useful must be true, false or null');
  if (r.metadata !== undefined && r.metadata !== null && (typeof r.metadata !== 'object' || Array.isArray(r.metadata))) throw invalid('metadata', 'metadata must be an object');
  return {
    id: drawerId(r.id),
    wing: placeName('wing', r.wing),
    room: placeName('room', r.room),
    tags: tagList(r.tags),
    content: drawerContent(r.content),
    source_file: r.source_file === null || r.source_file === undefined || r.source_file === '' ? null : text('source_file', r.source_file, 4096, ''),
    chunk_index: chunkIndex,
    parent_id: r.parent_id === null || r.parent_id === undefined || r.parent_id === '' ? null : drawerId(r.parent_id),
    filed_at: text('filed_at', r.filed_at, 64, ''),
    added_by: text('added_by', r.added_by, 256, 'import'),
    useful: typeof r.useful === 'boolean' ? r.useful : null,
    metadata: (r.metadata as Record<string, unknown> | undefined) ?? {},
  };
}

interface Refusal {
  index: number;
  id: string | null;
  code: string;
  message: string;
  field?: string;
}

function refusal(index: number, raw: unknown, key: string, err: unknown): Refusal {
  const e = toHubError(err);
  const id = raw && typeof raw === 'object' ? (raw as Record<string, unknown>)[key] : undefined;
  return { index, id: typeof id === 'string' ? id : null, code: e.code, message: e.message, ...(e.field ? { field: e.field } : {}) };
}

/** Files a batch of exported drawer rows and KG facts; each row is accepted or refused on its own. */
export async function importBatch(memory: Memory, kg: KnowledgeGraph, raw: { drawers?: unknown; kg_facts?: unknown }) {
  const drawers = raw.drawers ?? [];
  const facts = raw.kg_facts ?? [];
  if (!Array.isArray(drawers)) throw invalid('drawers', 'drawers must be an array of exported drawer rows');
  if (!Array.isArray(facts)) throw invalid('kg_facts', 'kg_facts must be an array of exported facts');
  if (drawers.length + facts.length > IMPORT_BATCH_MAX) throw invalid('drawers', `at most ${IMPORT_BATCH_MAX} rows per import call`);
  const refused: Refusal[] = [];
  const valid: PortableDrawer[] = [];
  const seen = new Set<string>();
  let repeated = 0;
  drawers.forEach((row: unknown, index) => {
    try {
      const d = portableDrawer(row);
      if (seen.has(d.id)) repeated++;
      else {
        seen.add(d.id);
        valid.push(d);
      }
    } catch (err) {
      refused.push(refusal(index, row, 'id', err));
    }
  });
  const { imported, skipped } = await memory.restoreDrawers(valid);
  const kgRefused: Refusal[] = [];
  let kgImported = 0;
  let kgSkipped = 0;
  facts.forEach((fact: unknown, index) => {
    try {
      if (!fact || typeof fact !== 'object' || Array.isArray(fact)) throw invalid('kg_facts', 'each fact must be an object');
      if (kg.restoreFact(fact as Record<string, unknown>)) kgImported++;
      else kgSkipped++;
    } catch (err) {
      kgRefused.push(refusal(index, fact, 'triple_id', err));
    }
  });
  return {
    drawers: { imported: imported.length, skipped: skipped.length + repeated, refused },
    kg_facts: { imported: kgImported, skipped: kgSkipped, refused: kgRefused },
  };
}
