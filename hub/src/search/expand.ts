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
/**
 * Units of a query stem's postings read at most (the most recently counted first). A common word's
 * postings at 100k+ chunks run to tens of thousands of units; P(ident | word) is then estimated from
 * this sample (PMI = log(N * co / (sample * n_ident))), which bounds a query's reads. Below the cap
 * the statistic is exact.
 */
export const MAX_POSTINGS = 2000;

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

/** What search asks of term associations (the in-memory index here, or the persistent counts of search/association-store.ts). */
export interface Expander {
  expand(queryStems: readonly string[]): Expansion[];
}

/** One code chunk as the index counts it. */
export interface AssociationUnit {
  /** Distinct stems of its comment and doc words. */
  desc: string[];
  /** Distinct stems of its identifier words. */
  idents: string[];
  /** Identifier stem → surface word → occurrences in the chunk's code. */
  forms: Map<string, Map<string, number>>;
}

/** A code chunk's unit; undefined when it is not code (no `language`) or has no description or identifier words. */
export function associationUnit(d: AssociationSource): AssociationUnit | undefined {
  const language = d.metadata.language;
  if (typeof language !== 'string' || language === '') return undefined;
  const comments = commentsOf(d.content, language);
  const doc = typeof d.metadata.doc === 'string' ? d.metadata.doc : '';
  const desc = new Set<string>();
  for (const w of `${comments.join(' ')} ${doc}`.match(WORD) ?? []) for (const p of identifierParts(w)) if (usable(p.toLowerCase())) desc.add(stem(p));
  if (desc.size === 0) return undefined;
  const code = d.content.replace(language === 'python' ? /#[^\n]*/g : /\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, ' ');
  const forms = new Map<string, Map<string, number>>();
  for (const w of code.match(WORD) ?? []) {
    // Identifier words: the parts of compound names, and plain names too (`min`, `compose`).
    for (const p of identifierParts(w)) {
      const lower = p.toLowerCase();
      if (!usable(lower)) continue;
      const s = stem(lower);
      let words = forms.get(s);
      if (!words) forms.set(s, (words = new Map()));
      words.set(lower, (words.get(lower) ?? 0) + 1);
    }
  }
  if (forms.size === 0) return undefined;
  return { desc: [...desc], idents: [...forms.keys()], forms };
}

/** The most frequent surface form (ties: the smaller word). */
export function surfaceOf(forms: Iterable<[string, number]>): string {
  let best = '';
  let count = -1;
  for (const [w, c] of forms) if (c > count || (c === count && w < best)) [best, count] = [w, c];
  return best;
}

/** What the scoring of one query stem reads from an index. */
export interface StemCounts {
  /** Units in all. */
  units: number;
  /** Units whose descriptions hold the stem, as read (at most MAX_POSTINGS: the sample co was counted over). */
  descDf: number;
  /** Units whose identifiers hold the stem. */
  identDf: number;
  /** Per identifier stem: units shared with the query stem's descriptions, and its own identifier df. */
  co: Iterable<{ stem: string; co: number; df: number }>;
}

/** A query stem's candidates, best PMI first (before the query's own stems are left out); surface words looked up for the survivors only. */
export function scoreStem(q: string, counts: StemCounts, surface: (identStem: string) => string): Array<Expansion & { stem: string }> {
  const scored: Array<Expansion & { stem: string }> = [];
  for (const { stem: s, co, df } of counts.co) {
    if (co < MIN_PAIR) continue;
    const pmi = Math.log((counts.units * co) / (counts.descDf * (df || 1)));
    if (pmi <= 0) continue;
    scored.push({ word: surface(s), from: q, pmi, stem: s });
  }
  scored.sort((a, b) => b.pmi - a.pmi || (a.word < b.word ? -1 : 1));
  return scored;
}

/** Whether a query stem is expanded at all: a word of the descriptions' vocabulary, seen in enough units. */
export function expandsStem(descDf: number, identDf: number): boolean {
  // Only a word of the descriptions' vocabulary: one the code uses as a name at least as often
  // needs no bridge (its own matches are the evidence), and expanding it adds noise (measured).
  return descDf >= MIN_PAIR && identDf < descDf;
}

/**
 * The expansions of a query from each of its stems' scored candidates (scoreStem): at most PER_TERM
 * per query stem and MAX_TERMS in all, none that is already a query stem; round robin over the
 * query's words, so one word cannot take every slot.
 */
export function pickExpansions(own: ReadonlySet<string>, perStem: ReadonlyArray<ReadonlyArray<Expansion & { stem?: string }>>): Expansion[] {
  const perTerm = perStem.map((list) => list.filter((e) => !own.has(e.stem ?? '')).slice(0, PER_TERM));
  const picked = new Map<string, Expansion>();
  for (let round = 0; round < PER_TERM && picked.size < MAX_TERMS; round++)
    for (const list of perTerm) {
      const e = list[round];
      if (e && !picked.has(e.word) && picked.size < MAX_TERMS) picked.set(e.word, { word: e.word, from: e.from, pmi: e.pmi });
    }
  return [...picked.values()];
}

/** The index in memory, built from drawers (the reference the persistent counts are tested against, and the bench's). */
export class TermAssociations implements Expander {
  private readonly stemId = new Map<string, number>();
  private readonly stems: string[] = [];
  /** Surface forms per identifier stem id. */
  private readonly surface = new Map<number, Map<string, number>>();
  /** Description stem → the units (chunks) whose comments or doc hold it. */
  private readonly descPostings = new Map<string, number[]>();
  /** Per unit: its distinct identifier-word stem ids. */
  private readonly unitIdents: Uint32Array[] = [];
  /** Units holding each identifier stem id. */
  private readonly identDf: number[] = [];

  get units(): number {
    return this.unitIdents.length;
  }

  private id(s: string): number {
    let id = this.stemId.get(s);
    if (id === undefined) {
      id = this.stems.length;
      this.stems.push(s);
      this.stemId.set(s, id);
      this.identDf.push(0);
    }
    return id;
  }

  /** Adds one code chunk; returns false when it is not code (no `language`) or has no description or identifier words. */
  add(d: AssociationSource): boolean {
    const u = associationUnit(d);
    if (!u) return false;
    const unit = this.unitIdents.length;
    const ids = u.idents.map((s) => this.id(s));
    this.unitIdents.push(Uint32Array.from(ids));
    for (const i of ids) this.identDf[i] = (this.identDf[i] ?? 0) + 1;
    for (const [s, words] of u.forms) {
      const id = this.id(s);
      let forms = this.surface.get(id);
      if (!forms) this.surface.set(id, (forms = new Map()));
      for (const [w, c] of words) forms.set(w, (forms.get(w) ?? 0) + c);
    }
    for (const s of u.desc) {
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
    const perStem: Array<Array<Expansion & { stem: string }>> = [];
    for (const q of own) {
      const postings = this.descPostings.get(q);
      const qid = this.stemId.get(q);
      const identDf = qid === undefined ? 0 : (this.identDf[qid] ?? 0);
      if (!postings || !expandsStem(postings.length, identDf)) continue;
      // The most recently added units first (as the persistent counts read them).
      const sample = postings.length > MAX_POSTINGS ? postings.slice(-MAX_POSTINGS) : postings;
      const co = new Map<number, number>();
      for (const u of sample) for (const i of this.unitIdents[u] ?? []) co.set(i, (co.get(i) ?? 0) + 1);
      const rows = [...co].map(([i, c]) => ({ stem: this.stems[i] ?? '', co: c, df: this.identDf[i] ?? 1 }));
      perStem.push(scoreStem(q, { units: n, descDf: sample.length, identDf, co: rows }, (s) => surfaceOf(this.surface.get(this.stemId.get(s) ?? -1) ?? [])));
    }
    return pickExpansions(own, perStem);
  }
}
