// The reservation-glob matcher (issue 29 follow-up): a whole pattern, `{a,b}` groups included, compiles
// to ONE automaton over its positions, so brace alternatives share work instead of each running the
// path again. Consuming moves are bit-parallel (shift/and over 32-bit int32 mask words, as before).
// Moves that consume nothing to the next state (past `*`, `**`, `**\/`, a group's closing) are closed
// in the same pass by carry propagation: adding the live states of a run of such states to the run's
// mask carries through the rest of the run. The jumps of groups with alternatives (into each alternative, from the
// end of one to the group's closing) take each source's precomputed closure mask. A lazy DFA sits on
// top: each state set a path reaches is interned once and its moves memoized per character class, so a
// path costs one table lookup per character once its sets are known. The DFA is capped (per pattern
// and in total); past the caps the rest of the path runs on the bit sets, O(path × mask words × (3 +
// live group jumps)), never backtracking. Pure, no regex at match time.

/** A parsed pattern: literal runs (raw text, wildcards not yet read) and `{…}` groups of alternatives. */
export type GlobNode = string | GlobNode[][];

/**
 * Parses `{a,b}` groups (nested allowed, an unclosed group runs to the end, a stray `,` or `}` outside
 * any group is literal). Wildcards are read later within one literal run (`**{,x}/` is `**` then a
 * group, never `**\/`), as the regex this replaced did.
 */
export function parseGlob(pattern: string): GlobNode[] {
  let i = 0;
  const parseSeq = (inGroup: boolean): GlobNode[] => {
    const seq: GlobNode[] = [];
    let lit = '';
    while (i < pattern.length) {
      const c = pattern[i] ?? '';
      if (c === '{') {
        if (lit) seq.push(lit);
        lit = '';
        i++;
        const alts: GlobNode[][] = [parseSeq(true)];
        while (pattern[i] === ',') {
          i++;
          alts.push(parseSeq(true));
        }
        if (pattern[i] === '}') i++;
        seq.push(alts);
      } else if (inGroup && (c === ',' || c === '}')) break;
      else {
        lit += c;
        i++;
      }
    }
    if (lit) seq.push(lit);
    return seq;
  };
  return parseSeq(false);
}

/** The wildcard tokens of one literal run, in order: `**\/`, `**`, `*`, `?`, or one literal character. */
export function runTokens(run: string): string[] {
  return run.match(/\*\*\/|\*\*|\*|\?|[^]/gu) ?? [];
}

// State kinds. Consuming: a literal char, `?` (one char but '/'), `*` (any run without '/'), `**` (any
// run), and `**\/` (zero or more whole segments) as two states: inside a segment (IN), then at a segment
// start (DIRS). DIRS comes second so that skipping `**\/` is a move to the next state like the others;
// a move into IN from before it lands on DIRS instead. Non-consuming: a group's opening, the end of one
// of its alternatives (but the last), its closing.
const LIT = 0;
const ONE = 1;
const STAR = 2;
const ANY = 3;
const DIRS_IN = 4;
const DIRS = 5;
const OPEN = 6;
const SEP = 7;
const CLOSE = 8;

const SLASH = 47;
/** Character class 0: any char but '/' that no literal state names; class 1: '/'; then one per literal. */
const OTHER_CLASS = 0;
const SLASH_CLASS = 1;

/** A whole pattern compiled to bit masks over its states (state m, one past the last, accepts). */
export interface GlobAutomaton {
  m: number;
  words: number;
  /** Class of a char code below 128; codes above go through `wideClass`. */
  asciiClass: Uint8Array;
  wideClass: Map<number, number>;
  classes: number;
  /** Per class, the states moving forward on it (a literal, `?`, IN on '/'): `classes × words`. */
  fwdBy: Int32Array;
  /** The states staying put on a char but '/' (row 0) and on '/' (row 1). */
  stayBy: Int32Array;
  /** The two states of each `**\/`, and whether there is any. */
  dirs: Int32Array;
  dirsIn: Int32Array;
  hasDirs: boolean;
  /** States that move to the next one without consuming (IN too, as a pass-through only). */
  next: Int32Array;
  /** Group jumps (an opening with alternatives, the end of an alternative) and each one's closure row. */
  jumpSrc: Int32Array;
  jumpRow: Int32Array;
  jumps: Int32Array;
  /** Scratch for the closure: the states inside the jump closures taken so far. */
  covered: Int32Array;
  start: Int32Array;
  dfa: Dfa;
}

/** The lazily built DFA: state sets interned once, their moves memoized per class (-1 = not yet). */
interface Dfa {
  sets: Int32Array[];
  accept: boolean[];
  dead: boolean[];
  next: Int32Array[];
  index: Map<string, number>;
}

/**
 * The DFA caps: most states one pattern interns, and the total size of every cached pattern's DFA
 * states together, in 4-byte cells (a state costs about 4 per mask word for its set and its key, one
 * per character class for its moves, and 80 for two typed arrays and a map entry: about 4 MB at most
 * in all). Past them the rest of a path runs on bit sets. Mutable for tests that drive the bit-set road.
 */
export const dfaLimits = { perPattern: 256, total: 1 << 20 };
let dfaCells = 0;

/** Cells of DFA state held over every live automaton (for tests of the budget). */
export const dfaCellsInUse = (): number => dfaCells;

const stateCells = (a: GlobAutomaton): number => 4 * a.words + a.classes + 80;

/** Work done by the last match (mask words touched, plus one per memoized DFA move), for tests that bound it. */
export const matchWork = { last: 0 };

const bit = (mask: Int32Array, s: number, words: number, row = 0): void => {
  const w = row * words + (s >>> 5);
  mask[w] = (mask[w] ?? 0) | (1 << (s & 31));
};
const has = (mask: Int32Array, s: number): boolean => ((mask[s >>> 5] ?? 0) & (1 << (s & 31))) !== 0;

/** Compiles a parsed pattern into one automaton (every alternative of every group in it). */
export function compileGlob(tree: GlobNode[]): GlobAutomaton {
  const kinds: number[] = [];
  const codes: number[] = [];
  /** Targets of OPEN and SEP states. */
  const targets = new Map<number, number[]>();
  /** The ends of a group's alternatives, by each one of them. */
  const siblings = new Map<number, number[]>();
  const state = (kind: number, code = 0): void => {
    kinds.push(kind);
    codes.push(code);
  };
  const emit = (seq: GlobNode[]): void => {
    for (const node of seq) {
      if (typeof node === 'string') {
        for (const t of runTokens(node)) {
          if (t === '**/') {
            state(DIRS_IN);
            state(DIRS);
          } else if (t === '**' || t === '*' || t === '?') state(t === '**' ? ANY : t === '*' ? STAR : ONE);
          else for (let k = 0; k < t.length; k++) state(LIT, t.charCodeAt(k));
        }
        continue;
      }
      const open = kinds.length;
      state(OPEN);
      const starts: number[] = [];
      const seps: number[] = [];
      node.forEach((alt, k) => {
        starts.push(kinds.length);
        emit(alt);
        if (k < node.length - 1) {
          seps.push(kinds.length);
          state(SEP);
        }
      });
      const close = kinds.length;
      state(CLOSE);
      targets.set(open, starts);
      for (const s of seps) {
        targets.set(s, [close]);
        siblings.set(s, seps);
      }
    }
  };
  emit(tree);
  const m = kinds.length;
  const words = (m >>> 5) + 1;

  const asciiClass = new Uint8Array(128);
  asciiClass[SLASH] = SLASH_CLASS;
  const wideClass = new Map<number, number>();
  const classOfCode = new Map<number, number>([[SLASH, SLASH_CLASS]]);
  kinds.forEach((k, s) => {
    const code = codes[s] ?? 0;
    if (k !== LIT || classOfCode.has(code)) return;
    const cls = classOfCode.size + 1;
    classOfCode.set(code, cls);
    if (code < 128) asciiClass[code] = cls;
    else wideClass.set(code, cls);
  });
  const classes = classOfCode.size + 1;

  const mask = (rows = 1): Int32Array => new Int32Array(rows * words);
  const lit = mask(classes);
  const one = mask();
  const star = mask();
  const any = mask();
  const a: GlobAutomaton = {
    m, words, asciiClass, wideClass, classes,
    fwdBy: mask(classes), stayBy: mask(2), dirs: mask(), dirsIn: mask(), hasDirs: kinds.includes(DIRS),
    next: mask(), jumpSrc: mask(), jumpRow: new Int32Array(m + 1).fill(-1), jumps: mask(0), covered: mask(), start: mask(),
    dfa: { sets: [], accept: [], dead: [], next: [], index: new Map() },
  };
  kinds.forEach((k, s) => {
    if (k === LIT) bit(lit, s, words, classOfCode.get(codes[s] ?? 0) ?? 0);
    else if (k === ONE) bit(one, s, words);
    else if (k === STAR) bit(star, s, words);
    else if (k === ANY) bit(any, s, words);
    else if (k === DIRS) bit(a.dirs, s, words);
    else if (k === DIRS_IN) bit(a.dirsIn, s, words);
    const jumpsTo = targets.get(s);
    if (k === STAR || k === ANY || k === CLOSE || k === DIRS || k === DIRS_IN || (k === OPEN && jumpsTo?.length === 1 && jumpsTo[0] === s + 1)) bit(a.next, s, words);
    else if (k === OPEN || k === SEP) bit(a.jumpSrc, s, words);
  });
  for (let w = 0; w < words; w++) {
    for (let c = 0; c < classes; c++) a.fwdBy[c * words + w] = (lit[c * words + w] ?? 0) | (c === SLASH_CLASS ? (a.dirsIn[w] ?? 0) : (one[w] ?? 0));
    a.stayBy[w] = (star[w] ?? 0) | (any[w] ?? 0) | (a.dirsIn[w] ?? 0);
    a.stayBy[words + w] = (any[w] ?? 0) | (a.dirs[w] ?? 0);
  }
  // Every state's closure, last state first (every move that consumes nothing goes forward); a move
  // into IN lands on its DIRS. The jump sources keep theirs.
  const land = (t: number): number => (kinds[t] === DIRS_IN ? t + 1 : t);
  const all = mask(m + 1);
  for (let s = m; s >= 0; s--) {
    bit(all, s, words, s);
    const k = s < m ? kinds[s] : -1;
    const to = k === STAR || k === ANY || k === CLOSE || k === DIRS ? [s + 1] : k === OPEN || k === SEP ? (targets.get(s) ?? []) : [];
    for (const t of to.map(land)) for (let w = 0; w < words; w++) all[s * words + w] = (all[s * words + w] ?? 0) | (all[t * words + w] ?? 0);
  }
  const sources = kinds.flatMap((_, s) => (has(a.jumpSrc, s) ? [s] : []));
  a.jumps = new Int32Array(sources.length * words);
  sources.forEach((s, row) => {
    a.jumpRow[s] = row;
    a.jumps.set(all.subarray(s * words, (s + 1) * words), row * words);
    // The ends of one group's alternatives share a closure (the group's closing): the row of one marks
    // the others too, so the closure skips them as covered (live, they add nothing).
    for (const t of siblings.get(s) ?? []) bit(a.jumps, t, words, row);
  });
  a.start.set(all.subarray(land(0) * words, (land(0) + 1) * words));
  return a;
}

/** Whether the set the last closure produced holds any state. */
let lastLive = true;

/**
 * The closure's second part (the first is in `step`): each live group jump not already inside an
 * earlier jump's closure ORs in its closure row (complete: the rows are transitive). Adds to `d` in
 * place; returns the work.
 */
function closeJumps(a: GlobAutomaton, d: Int32Array): number {
  const { words, jumpSrc, jumpRow, jumps, covered } = a;
  let work = 0;
  covered.fill(0);
  for (let w = 0; w < words; w++) {
    let x = (d[w] ?? 0) & (jumpSrc[w] ?? 0) & ~(covered[w] ?? 0);
    while (x !== 0) {
      const low = x & -x;
      const s = (w << 5) + 31 - Math.clz32(low);
      const row = (jumpRow[s] ?? 0) * words;
      // A closure only reaches states at or after its source: earlier words are untouched. A live
      // source inside a closure already taken adds nothing (the rows are transitive): skipped.
      for (let k = w; k < words; k++) {
        const j = jumps[row + k] ?? 0;
        d[k] = (d[k] ?? 0) | j;
        covered[k] = (covered[k] ?? 0) | j;
      }
      work += 2 * (words - w);
      x = (d[w] ?? 0) & (jumpSrc[w] ?? 0) & ~(covered[w] ?? 0) & ~((low << 1) - 1);
    }
  }
  return work;
}

/**
 * One character's move from the set `d` into `n`, closure included; returns the work. Word by word:
 * a word of `n` is final once its moves are in (they come from the word itself, a carry from the word
 * below, and a back move read from `d`), so the closure along runs of `next` states is done in the same
 * pass: adding the live ones of a run to the run's mask carries through the rest of the run and one
 * past it (IN passes a carry on but is never made live by one). Then the group jumps, if any is live.
 */
function step(a: GlobAutomaton, d: Int32Array, cls: number, n: Int32Array): number {
  const { words, fwdBy, stayBy, dirs, dirsIn, hasDirs, next, jumpSrc } = a;
  const slash = cls === SLASH_CLASS;
  const base = cls * words;
  const stayBase = slash ? words : 0;
  let carry = 0;
  let landCarry = 0;
  let sumCarry = 0;
  let jumping = 0;
  let any = 0;
  for (let w = 0; w < words; w++) {
    const dw = d[w] ?? 0;
    // Forward: a literal, `?`, or IN on '/' (back at a segment start).
    const fwd = dw & (fwdBy[base + w] ?? 0);
    let moved = (fwd << 1) | carry;
    carry = fwd >>> 31;
    const inW = hasDirs ? (dirsIn[w] ?? 0) : 0;
    if (hasDirs) {
      // A forward move into IN (from the state before `**\/`) lands on its DIRS, one further (IN's own
      // forward move goes to its DIRS). Back: DIRS on a char but '/' enters its segment (IN, one before).
      const intoIn = moved & inW;
      moved = (moved & ~inW) | (intoIn << 1) | landCarry;
      landCarry = intoIn >>> 31;
      if (!slash) moved |= ((dw & (dirs[w] ?? 0)) >>> 1) | (w + 1 < words ? ((d[w + 1] ?? 0) & (dirs[w + 1] ?? 0)) << 31 : 0);
    }
    const nw = moved | (dw & (stayBy[stayBase + w] ?? 0));
    // Unsigned: the sum of two words and a carry, up to 2^33, then its low word.
    const e = next[w] ?? 0;
    const sum = ((nw & e & ~inW) >>> 0) + (e >>> 0) + sumCarry;
    sumCarry = sum > 0xffffffff ? 1 : 0;
    const out = nw | (((sum | 0) ^ e) & ~inW);
    n[w] = out;
    any |= out;
    jumping |= out & (jumpSrc[w] ?? 0);
  }
  lastLive = any !== 0;
  return 2 * words + (jumping === 0 ? 0 : closeJumps(a, n));
}

const isEmpty = (d: Int32Array): boolean => {
  for (let w = 0; w < d.length; w++) if (d[w] !== 0) return false;
  return true;
};
const accepts = (a: GlobAutomaton, d: Int32Array): boolean => ((d[a.m >>> 5] ?? 0) & (1 << (a.m & 31))) !== 0;

/** The DFA state of a set, interned if new and under the caps; -1 past them. */
function intern(a: GlobAutomaton, d: Int32Array): number {
  const { dfa } = a;
  const key = d.join(',');
  const known = dfa.index.get(key);
  if (known !== undefined) return known;
  if (dfa.sets.length >= dfaLimits.perPattern || dfaCells + stateCells(a) > dfaLimits.total) return -1;
  dfaCells += stateCells(a);
  const id = dfa.sets.length;
  dfa.sets.push(d.slice());
  dfa.accept.push(accepts(a, d));
  dfa.dead.push(isEmpty(d));
  dfa.next.push(new Int32Array(a.classes).fill(-1));
  dfa.index.set(key, id);
  return id;
}

/** Gives a dropped pattern's DFA states back to the total budget. */
export function releaseGlob(a: GlobAutomaton): void {
  dfaCells -= a.dfa.sets.length * stateCells(a);
  a.dfa = { sets: [], accept: [], dead: [], next: [], index: new Map() };
}

/** Whether the automaton accepts the whole of `path`; one pass, no backtracking. */
export function runGlob(a: GlobAutomaton, path: string): boolean {
  const { asciiClass, wideClass, dfa, words } = a;
  const classOf = (c: number): number => (c < 128 ? (asciiClass[c] ?? OTHER_CLASS) : (wideClass.get(c) ?? OTHER_CLASS));
  let work = 0;
  let cur = dfa.sets.length > 0 ? 0 : intern(a, a.start);
  let i = 0;
  let d: Int32Array | null = cur < 0 ? a.start.slice() : null;
  let n: Int32Array = new Int32Array(words);
  for (; cur >= 0 && i < path.length; i++) {
    if (dfa.dead[cur]) break;
    const cls = classOf(path.charCodeAt(i));
    const row = dfa.next[cur] as Int32Array;
    let to = row[cls] ?? -1;
    work++;
    if (to < 0) {
      work += step(a, dfa.sets[cur] as Int32Array, cls, n);
      to = intern(a, n);
      if (to < 0) {
        // Past the DFA caps: carry on with the bit sets from here.
        d = n;
        n = new Int32Array(words);
        i++;
        cur = -1;
        break;
      }
      row[cls] = to;
    }
    cur = to;
  }
  if (cur >= 0) {
    matchWork.last += work;
    return dfa.accept[cur] ?? false;
  }
  let live: Int32Array = d ?? a.start.slice();
  lastLive = !isEmpty(live);
  for (; i < path.length && lastLive; i++) {
    const c = path.charCodeAt(i);
    work += step(a, live, c < 128 ? (asciiClass[c] ?? OTHER_CLASS) : (wideClass.get(c) ?? OTHER_CLASS), n);
    const t = live;
    live = n;
    n = t;
  }
  matchWork.last += work;
  return accepts(a, live);
}
