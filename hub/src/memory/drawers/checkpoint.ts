// Checkpoint: files several memories (and optionally one diary entry) in one call. Each item is
// checked on its own: a bad item gets its own error entry and never stops the others. Must not
// bypass the single-drawer path: every item is filed through Memory.addDrawer (same ids, same
// secret refusal, same near-duplicate check against the palace at `dedup_threshold`).
//
// Decisions: items of one call that duplicate each other count as duplicates too (cosine of their
// whole-content embeddings ≥ threshold, or identical placement + content); the later item is the
// duplicate and names the earlier item's drawer id. With dry_run nothing is written, and the result
// says what a real run would do (added = would be filed).

import { HubError, invalid, toHubError } from '../../errors.js';
import { writeDiary } from './diary.js';
import { MEMORY_LIMITS } from './drawer-input.js';
import { DUPLICATE_THRESHOLD, type Memory } from './memory.js';

/** Most items one checkpoint takes (a bigger batch is a mine, not a checkpoint). */
export const CHECKPOINT_MAX_ITEMS = 200;

export interface CheckpointInput {
  items?: unknown;
  diary?: unknown;
  dedup_threshold?: unknown;
  dry_run?: unknown;
  added_by?: unknown;
}

export interface CheckpointResult {
  dry_run: boolean;
  dedup_threshold: number;
  added: Array<{ index: number; drawer_id: string; wing: string; room: string; chunk_ids?: string[] }>;
  duplicates: Array<{ index: number; duplicate_of: string; similarity: number; within_call: boolean }>;
  errors: Array<{ index: number; code: string; message: string; field?: string }>;
  diary?: { entry_id?: string; agent?: string; wing?: string; would_write?: true; error?: { code: string; message: string } };
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length && i < b.length; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

function thresholdOf(raw: unknown): number {
  if (raw === undefined || raw === null) return DUPLICATE_THRESHOLD;
  if (typeof raw !== 'number' || !(raw > 0 && raw <= 1)) throw invalid('dedup_threshold', 'dedup_threshold must be a number in (0, 1]');
  return raw;
}

function itemsOf(raw: unknown): unknown[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw invalid('items', 'items must be an array of {wing, room, content, tags?, source_file?}');
  if (raw.length > CHECKPOINT_MAX_ITEMS) throw invalid('items', `at most ${CHECKPOINT_MAX_ITEMS} items per checkpoint`);
  // One call's embedding work is bounded like one drawer's: 200 items of 1 MiB each would hold the
  // hub's embedder (and every other agent's filing) for many minutes.
  let bytes = 0;
  for (const item of raw as unknown[]) {
    const content = item && typeof item === 'object' ? (item as { content?: unknown }).content : undefined;
    if (typeof content === 'string') bytes += Buffer.byteLength(content, 'utf8');
  }
  if (bytes > MEMORY_LIMITS.contentBytes)
    throw new HubError('input.too_large', `the items' contents add up to ${bytes} bytes; a checkpoint takes at most ${MEMORY_LIMITS.contentBytes}: split it into several calls`, { field: 'items' });
  return raw as unknown[];
}

export async function checkpoint(memory: Memory, raw: CheckpointInput, defaultAgent: string | undefined): Promise<CheckpointResult> {
  const items = itemsOf(raw.items);
  const threshold = thresholdOf(raw.dedup_threshold);
  const dryRun = raw.dry_run === true;
  const addedBy = typeof raw.added_by === 'string' && raw.added_by.trim() ? raw.added_by.trim() : (defaultAgent ?? 'checkpoint');
  const diary = raw.diary === undefined || raw.diary === null ? undefined : (raw.diary as Record<string, unknown>);
  if (diary !== undefined && (typeof diary !== 'object' || Array.isArray(diary))) throw invalid('diary', 'diary must be an object {agent, entry, topic?}');
  if (items.length === 0 && !diary) throw invalid('items', 'give at least one item or a diary entry');

  const result: CheckpointResult = { dry_run: dryRun, dedup_threshold: threshold, added: [], duplicates: [], errors: [] };
  const fail = (index: number, err: unknown): void => {
    const e = toHubError(err);
    result.errors.push({ index, code: e.code, message: e.message, ...(e.field ? { field: e.field } : {}) });
  };

  // One embedding per well-formed item, in one batch, for the within-call comparison.
  const shaped = items.map((item, index) => {
    if (!item || typeof item !== 'object' || Array.isArray(item)) {
      fail(index, invalid('items', `items[${index}] must be an object {wing, room, content}`));
      return undefined;
    }
    return item as Record<string, unknown>;
  });
  const texts = shaped.map((s) => (s && typeof s.content === 'string' && s.content.trim() ? s.content : ''));
  const wanted = texts.map((t, i) => ({ t, i })).filter((x) => x.t !== '');
  const vectors = new Map<number, Float32Array>();
  const embedded = await memory.embedDocuments(wanted.map((x) => x.t));
  wanted.forEach((x, j) => vectors.set(x.i, embedded[j] ?? new Float32Array(0)));

  const accepted: Array<{ index: number; drawer_id: string; vector: Float32Array | undefined }> = [];
  for (const [index, item] of shaped.entries()) {
    if (!item) continue;
    try {
      const vector = vectors.get(index);
      const twin = vector
        ? accepted.map((a) => ({ a, sim: a.vector ? cosine(vector, a.vector) : 0 })).find((x) => x.sim >= threshold)
        : undefined;
      const r = await memory.addDrawer({
        wing: item.wing,
        room: item.room,
        content: item.content,
        tags: item.tags,
        source_file: item.source_file,
        added_by: addedBy,
        threshold,
        dry_run: dryRun || twin !== undefined,
      });
      // Validation passed (addDrawer throws on a bad field or a secret). Earlier items of this call win.
      if (twin) {
        result.duplicates.push({ index, duplicate_of: twin.a.drawer_id, similarity: Number(twin.sim.toFixed(4)), within_call: true });
        continue;
      }
      if (r.duplicate_of !== undefined) {
        const inCall = accepted.find((a) => a.drawer_id === r.duplicate_of);
        result.duplicates.push({ index, duplicate_of: r.duplicate_of, similarity: r.similarity ?? 1, within_call: inCall !== undefined });
        continue;
      }
      if (accepted.some((a) => a.drawer_id === r.drawer_id)) {
        // Same place and content as an earlier item of a dry run (a real run finds it stored).
        result.duplicates.push({ index, duplicate_of: r.drawer_id, similarity: 1, within_call: true });
        continue;
      }
      accepted.push({ index, drawer_id: r.drawer_id, vector });
      result.added.push({ index, drawer_id: r.drawer_id, wing: r.wing, room: r.room, ...(r.chunk_ids ? { chunk_ids: r.chunk_ids } : {}) });
    } catch (err) {
      fail(index, err);
    }
  }

  if (diary) result.diary = await diaryOf(memory, diary, defaultAgent, dryRun);
  return result;
}

async function diaryOf(memory: Memory, diary: Record<string, unknown>, defaultAgent: string | undefined, dryRun: boolean): Promise<NonNullable<CheckpointResult['diary']>> {
  const input = { agent_name: diary.agent ?? diary.agent_name, entry: diary.entry ?? diary.content, topic: diary.topic, wing: diary.wing };
  try {
    if (dryRun) {
      // Validate exactly as a write would, without writing: addDrawer in dry-run mode, forced.
      const agent = typeof input.agent_name === 'string' && input.agent_name.trim() ? input.agent_name.trim() : defaultAgent;
      if (!agent) throw invalid('diary.agent', 'diary.agent is required (or set PALACE_AGENT_NAME on the hub)');
      await memory.addDrawer({ wing: 'diary-check', room: 'diary', content: input.entry, force: true, dry_run: true });
      return { agent, would_write: true };
    }
    const w = await writeDiary(memory, input, defaultAgent);
    return { entry_id: w.entry_id, agent: w.agent, wing: w.wing };
  } catch (err) {
    const e = toHubError(err);
    return { error: { code: e.code, message: e.message } };
  }
}
