// Query expansion from the palace itself (issue 32): a question is asked in the words people write in
// comments and docs ("credential", "lowest"), the code spells its names in others (`findSecret`,
// `min`). Every code chunk pairs the two vocabularies: the words of its comments and doc comments
// against the sub-words of the identifiers it uses. Words that meet in more chunks than chance
// predicts are associated, scored by pointwise mutual information (Church and Hanks 1990):
//   PMI(a, b) = log( N * co(a, b) / (n_desc(a) * n_ident(b)) )
// with their reliability floor (a pair seen in fewer than MIN_PAIR chunks is ignored). A query word
// of the descriptions' vocabulary (more often in comments than in names: the vocabulary gap) brings
// in its best associated identifier words, at most PER_TERM each and
// MAX_TERMS in all, weighted below the query's own words (EXPANSION_WEIGHT, RM3's usual
// interpolation of 0.5). Co-occurrence is counted at query time over the postings of the query's
// words only, so the index is the postings and nothing quadratic is stored.

import { identifierParts, isStopword, stem } from './query.js';

/** Church and Hanks: pairs seen fewer than 5 times are unreliable. */
export const MIN_PAIR = 5;
/** Identifier words added per query word, and in all. */
export const PER_TERM = 1;
export const MAX_TERMS = 6;
/** Weight of the added words against the query's own (1). */
export const EXPANSION_WEIGHT = 0.5;
/** Chunks read into the index at most (the most recent mined code first, as the caller lists them). */
export const MAX_UNITS = 100_000;

const WORD = /[\p{L}\p{N}_$]+/gu;

/** Comments of C-family code (`//`, `/* *\/`) and Python `#` lines. */
function commentsOf(content: string, language: string): string[] {
  return content.match(language === 'python' ? /#[^\n]*|"""[\s\S]*?"""/g : /\/\*[\s\S]*?\*\/|\/\/[^\n]*/g) ?? [];
}

function usable(word: string): boolean {
  return word.length >= 3 && !/^\d+$/.test(word) && !isStopword(word);
}

/** The drawer fields the index reads. */
export interface AssociationSource {
  content: string;
  metadata: Record<string, unknown>;
}

export interface Expansion {
  /** The surface word added (the most frequent form of its stem in the code). */
  word: string;
  /** The query stem it came from. */
  from: string;
  pmi: number;
}

export class TermAssociations {
  private readonly stems: string[] = [];
  private readonly stemId = new Map<string, number>();
  /** Most frequent surface form per identifier stem id. */
  private readonly surface = new Map<number, Map<string, number>>();
  /** Description stem → the units (chunks) whose comments or doc hold it. */
  private readonly descPostings = new Map<string, number[]>();
  /** Per unit: its distinct identifier-word stem ids. */
  private readonly unitIdents: Uint32Array[] = [];
  /** Units holding each identifier stem id. */
  private identDf: number[] = [];

  get units(): number {
    return this.unitIdents.length;
  }

  private id(s: string, word: string): number {
    let id = this.stemId.get(s);
    if (id === undefined) {
      id = this.stems.length;
      this.stems.push(s);
      this.stemId.set(s, id);
      this.identDf.push(0);
    }
    let forms = this.surface.get(id);
    if (!forms) this.surface.set(id, (forms = new Map()));
    forms.set(word, (forms.get(word) ?? 0) + 1);
    return id;
  }

  /** Adds one code chunk; returns false when it is not code (no `language`) or has no description words. */
  add(d: AssociationSource): boolean {
    const language = d.metadata.language;
    if (typeof language !== 'string' || language === '' || this.unitIdents.length >= MAX_UNITS) return false;
    const comments = commentsOf(d.content, language);
    const doc = typeof d.metadata.doc === 'string' ? d.metadata.doc : '';
    const desc = new Set<string>();
    for (const w of `${comments.join(' ')} ${doc}`.match(WORD) ?? []) for (const p of identifierParts(w)) if (usable(p.toLowerCase())) desc.add(stem(p));
    if (desc.size === 0) return false;
    const code = d.content.replace(language === 'python' ? /#[^\n]*/g : /\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, ' ');
    const idents = new Set<number>();
    for (const w of code.match(WORD) ?? []) {
      const parts = identifierParts(w);
      // Identifier words: the parts of compound names, and plain names too (`min`, `compose`).
      for (const p of parts) {
        const lower = p.toLowerCase();
        if (usable(lower)) idents.add(this.id(stem(lower), lower));
      }
    }
    if (idents.size === 0) return false;
    const unit = this.unitIdents.length;
    this.unitIdents.push(Uint32Array.from(idents));
    for (const i of idents) this.identDf[i] = (this.identDf[i] ?? 0) + 1;
    for (const s of desc) {
      const list = this.descPostings.get(s);
      if (list) list.push(unit);
      else this.descPostings.set(s, [unit]);
    }
    return true;
  }

  static build(drawers: Iterable<AssociationSource>): TermAssociations {
    const t = new TermAssociations();
    for (const d of drawers) t.add(d);
    return t;
  }

  /**
   * The identifier words associated with the query's stems, best PMI first: at most PER_TERM per
   * query stem and MAX_TERMS in all, none that is already a query stem.
   */
  expand(queryStems: readonly string[]): Expansion[] {
    const n = this.unitIdents.length;
    if (n === 0) return [];
    const own = new Set(queryStems);
    const picked = new Map<string, Expansion>();
    const perTerm: Expansion[][] = [];
    for (const q of own) {
      const postings = this.descPostings.get(q);
      if (!postings || postings.length < MIN_PAIR) continue;
      const qid = this.stemId.get(q);
      const qIdentDf = qid === undefined ? 0 : (this.identDf[qid] ?? 0);
      // Only a word of the descriptions' vocabulary: one the code uses as a name at least as often
      // needs no bridge (its own matches are the evidence), and expanding it adds noise (measured).
      if (qIdentDf >= postings.length) continue;
      const co = new Map<number, number>();
      for (const u of postings) for (const i of this.unitIdents[u] ?? []) co.set(i, (co.get(i) ?? 0) + 1);
      const scored: Expansion[] = [];
      for (const [i, c] of co) {
        if (c < MIN_PAIR) continue;
        const s = this.stems[i] ?? '';
        if (own.has(s)) continue;
        const pmi = Math.log((n * c) / (postings.length * (this.identDf[i] ?? 1)));
        if (pmi <= 0) continue;
        scored.push({ word: this.surfaceOf(i), from: q, pmi });
      }
      scored.sort((a, b) => b.pmi - a.pmi || (a.word < b.word ? -1 : 1));
      perTerm.push(scored.slice(0, PER_TERM));
    }
    // Round robin over the query's words, so one word cannot take every slot.
    for (let round = 0; round < PER_TERM && picked.size < MAX_TERMS; round++)
      for (const list of perTerm) {
        const e = list[round];
        if (e && !picked.has(e.word) && picked.size < MAX_TERMS) picked.set(e.word, e);
      }
    return [...picked.values()];
  }

  private surfaceOf(id: number): string {
    let best = '';
    let count = -1;
    for (const [w, c] of this.surface.get(id) ?? []) if (c > count || (c === count && w < best)) [best, count] = [w, c];
    return best;
  }
}
