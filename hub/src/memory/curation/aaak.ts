// AAAK, palace's compact summary dialect: its specification (in our words) and a deterministic
// encoder from one drawer's verbatim text to a two-line summary. Pure; a summary never replaces content.

import { keywords, properTerms, sentences } from '../../core/terms.js';

export const AAAK_VERSION = 1;

export const AAAK_SPEC = `AAAK v${AAAK_VERSION}: palace's compact summary dialect

What it is. A lossy, structured digest of one drawer, written beside the drawer by
\`palace compress\` (stored in <palace>/aaak.json, keyed by drawer id). It lets an agent skim many
memories for a fraction of the tokens. It is NOT the memory: the verbatim drawer stays untouched and
is what you quote (palace_get_drawer) whenever wording, numbers or code matter.

Shape. Each summary is two lines of '|'-separated fields:

  H|<wing>/<room>|<YYYY-MM-DD>|<PRIMARY>|<title>
  Z|<CODES>|<topics>|"<quote>"|<weight>|<FLAGS>

H, the header line: where the drawer sits, the day it was filed, the code of its most mentioned
  entity ('_' when it names none) and a title: at most 8 words from its first line.
Z, the body line:
  CODES   up to 5 entity codes joined by '+' ('_' when none). An entity is a name in the text:
          a capitalized word that does not merely open a sentence (Alice, Postgres), or a
          name-shaped word anywhere (SQLite, WAL, OAuth2). Its code is three capital letters from
          the name (SQLite -> SQL); a clash takes the next unused letters or a digit. The legend
          (code -> name) is stored with the summary, not in the line.
  topics  up to 4 topic keywords joined by '_': the most frequent words of 4+ letters that are
          not common English words, ties broken by first use.
  quote   the key sentence, verbatim but cut at 120 characters: the sentence naming the most
          topics and entities (entities count double, a flag word adds 2), earliest on ties.
          Double quotes inside become single quotes.
  weight  1-5: the drawer's importance (metadata importance, else weight, else emotional_weight,
          default 3), plus 1 when flagged DECISION or CORE, clamped to 1-5.
  FLAGS   joined by '+', '-' when none. Each is raised by words in the text:
          DECISION   decided, chose, agreed, decision, we will, going with, settled on
          TECHNICAL  code, bug, test, build, deploy, api, schema, config, error, function, query
          PIVOT      instead, switched, replaced, no longer, migrated, moved to, changed to
          CORE       always, never, must, rule, convention, principle, invariant
          ORIGIN     started, created, founded, initial, first version, kickoff
          SENSITIVE  personal, private, confidential, health, salary, password

Reading it. '|' and newlines never occur inside a field (they become '/' and ' '). The dialect has
no emotion field: palace memories are mostly engineering records, and weight carries importance.
Size is estimated as characters / 3.8 tokens. Re-running compress recomputes every summary from the
verbatim text and rewrites only those that changed, so summaries never drift from their drawers.`;

export const AAAK_LIMITS = { entities: 5, topics: 4, quoteChars: 120, titleWords: 8 } as const;

const FLAG_WORDS: ReadonlyArray<[string, RegExp]> = [
  ['DECISION', /\b(decided|decides|chose|choose|agreed|decision|we will|going with|settled on)\b/i],
  ['TECHNICAL', /\b(code|bugs?|tests?|build|deploy\w*|api|schema|config\w*|errors?|functions?|quer(y|ies))\b/i],
  ['PIVOT', /\b(instead|switched|replaced|no longer|migrated|moved to|changed to)\b/i],
  ['CORE', /\b(always|never|must|rules?|conventions?|principles?|invariants?)\b/i],
  ['ORIGIN', /\b(started|created|founded|initial|first version|kickoff)\b/i],
  ['SENSITIVE', /\b(personal|private|confidential|health|salary|password)\b/i],
];

export interface AaakInput {
  drawer_id: string;
  wing: string;
  room: string;
  filed_at: string;
  content: string;
  metadata: Record<string, unknown>;
}

export interface AaakSummary {
  drawer_id: string;
  wing: string;
  room: string;
  /** The two dialect lines. */
  text: string;
  entities: Array<{ code: string; name: string }>;
  topics: string[];
  quote: string;
  weight: number;
  flags: string[];
  source_chars: number;
  chars: number;
  token_estimate: number;
}

const clean = (s: string): string => s.replace(/[|\r\n]+/g, (m) => (m.includes('|') ? '/' : ' ')).replace(/\s+/g, ' ').trim();

export function tokenEstimate(chars: number): number {
  return Math.ceil(chars / 3.8);
}

function codeFor(name: string, taken: Set<string>): string {
  const letters = name.toUpperCase().replace(/[^A-Z]/g, '');
  const base = (letters + 'XXX').slice(0, 3);
  const candidates = [base, ...[...letters.slice(3)].map((c) => base.slice(0, 2) + c)];
  for (const c of candidates) if (!taken.has(c)) return c;
  for (let n = 2; ; n++) if (!taken.has(`${base.slice(0, 2)}${n}`)) return `${base.slice(0, 2)}${n}`;
}

function weightOf(metadata: Record<string, unknown>, flags: readonly string[]): number {
  const raw = [metadata.importance, metadata.weight, metadata.emotional_weight].find((v) => typeof v === 'number' && Number.isFinite(v));
  const base = typeof raw === 'number' ? raw : 3;
  const bonus = flags.includes('DECISION') || flags.includes('CORE') ? 1 : 0;
  return Math.min(5, Math.max(1, Math.round(base + bonus)));
}

/** The AAAK summary of one drawer; the same input always gives the same summary. */
export function encodeAaak(d: AaakInput): AaakSummary {
  const text = d.content;
  const names = properTerms(text);
  const lower = text.toLowerCase();
  const ranked = [...names.values()]
    .map((name, i) => ({ name, i, n: lower.split(name.toLowerCase()).length - 1 }))
    .sort((a, b) => b.n - a.n || a.i - b.i)
    .slice(0, AAAK_LIMITS.entities);
  const taken = new Set<string>();
  const entities = ranked.map(({ name }) => {
    const code = codeFor(name, taken);
    taken.add(code);
    return { code, name };
  });
  const topics = keywords(text, AAAK_LIMITS.topics);
  const flags = FLAG_WORDS.filter(([, re]) => re.test(text)).map(([f]) => f);
  const all = sentences(text);
  let quote = all[0] ?? '';
  let best = -1;
  for (const s of all) {
    const l = s.toLowerCase();
    const score =
      topics.filter((t) => l.includes(t)).length +
      2 * entities.filter((e) => l.includes(e.name.toLowerCase())).length +
      (FLAG_WORDS.some(([, re]) => re.test(s)) ? 2 : 0) -
      (s.length < 20 ? 3 : 0);
    if (score > best) {
      best = score;
      quote = s;
    }
  }
  quote = clean(quote).replace(/"/g, "'");
  if (quote.length > AAAK_LIMITS.quoteChars) quote = `${quote.slice(0, AAAK_LIMITS.quoteChars - 1)}…`;
  const firstLine = clean((text.split('\n').find((l) => l.trim()) ?? '').replace(/^[\s#>*-]+/, ''));
  const title = firstLine.split(' ').slice(0, AAAK_LIMITS.titleWords).join(' ');
  const weight = weightOf(d.metadata, flags);
  const header = ['H', clean(`${d.wing}/${d.room}`), d.filed_at.slice(0, 10), entities[0]?.code ?? '_', title].join('|');
  const body = ['Z', entities.map((e) => e.code).join('+') || '_', topics.join('_') || '_', `"${quote}"`, String(weight), flags.join('+') || '-'].join('|');
  const line = `${header}\n${body}`;
  return {
    drawer_id: d.drawer_id,
    wing: d.wing,
    room: d.room,
    text: line,
    entities,
    topics,
    quote,
    weight,
    flags,
    source_chars: text.length,
    chars: line.length,
    token_estimate: tokenEstimate(line.length),
  };
}
