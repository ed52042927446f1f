// The documented full-text fallback of backends without BM25 over stored text (Qdrant, Milvus):
// the server prefilters candidates containing any query word; we score them here by term frequency.

import type { StoredDrawer } from './vector-store.js';

/** Most candidates a fallback full-text query scores; the prefilter returns at most this many. */
export const TEXT_CANDIDATES = 1000;

const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}\p{N}]+)*/gu;

/** Lower-case words of `text` (letters and digits; an inner apostrophe stays: o'brien). */
export function textTokens(text: string): string[] {
  return (text.toLowerCase().match(WORD) ?? []).map((w) => w.replace(/’/g, "'"));
}

/** Distinct query words, in order; query syntax characters are just separators. */
export function queryTerms(query: string): string[] {
  return [...new Set(textTokens(query))].slice(0, 32);
}

/**
 * Score of `content` for `terms`: one point per matched term plus a term-frequency bonus below 0.1,
 * so a drawer matching more terms always ranks above one matching fewer. 0 = no match.
 */
export function termScore(content: string, terms: readonly string[]): number {
  if (terms.length === 0) return 0;
  const counts = new Map<string, number>();
  for (const token of textTokens(content)) counts.set(token, (counts.get(token) ?? 0) + 1);
  let matched = 0;
  let bonus = 0;
  for (const term of terms) {
    const tf = counts.get(term) ?? 0;
    if (tf === 0) continue;
    matched += 1;
    bonus += tf / (tf + 1);
  }
  return matched === 0 ? 0 : matched + (0.1 * bonus) / terms.length;
}

/** Ranks prefiltered candidates: positive scores only, best first, ties by id. */
export function rankByTerms(candidates: readonly StoredDrawer[], query: string, limit: number): Array<{ drawer: StoredDrawer; score: number }> {
  const terms = queryTerms(query);
  return candidates
    .map((drawer) => ({ drawer, score: termScore(drawer.content, terms) }))
    .filter((h) => h.score > 0)
    .sort((a, b) => b.score - a.score || (a.drawer.id < b.drawer.id ? -1 : a.drawer.id > b.drawer.id ? 1 : 0))
    .slice(0, limit);
}

/** Sorts drawers by (filed_at, id) in code-unit order, the order every scan promises. */
export function byFiledAtThenId<T extends { filed_at: string; id: string }>(a: T, b: T): number {
  if (a.filed_at !== b.filed_at) return a.filed_at < b.filed_at ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
