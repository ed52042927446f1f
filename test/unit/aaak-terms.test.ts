// The pure text features behind hallways, overlap and AAAK (proper terms, keywords, mentions) and
// the AAAK encoder: deterministic, field-safe, lossy by design.

import { describe, expect, it } from 'vitest';

import { keywords, mentions, properTerms, sentences } from '../../hub/src/core/terms.js';
import { AAAK_LIMITS, encodeAaak } from '../../hub/src/memory/curation/aaak.js';

describe('text terms', () => {
  it('takes names, not capitals that merely open a sentence', () => {
    const terms = properTerms('We chose SQLite in WAL mode. Then Alice Smith moved it to Acme Corp.\n- Fixed the OAuth2 flow.\nMonday came.');
    expect([...terms.values()]).toEqual(['SQLite', 'WAL', 'Alice Smith', 'Acme Corp', 'OAuth2']);
    expect([...properTerms('Use SQLite WAL mode with Lance.').values()]).toEqual(['SQLite', 'WAL', 'Lance']);
  });

  it('counts a sentence-opening name when the text also uses it mid-sentence', () => {
    expect([...properTerms('Alice wrote the page. The review went to Alice.').keys()]).toEqual(['alice']);
  });

  it('keywords are frequent non-stopwords of 4+ letters, ties by first use; mentions match whole words', () => {
    expect(keywords('the cache and the cache index; index the cache rows', 3)).toEqual(['cache', 'index', 'rows']);
    expect(mentions('We use SQLite, not sqlite3 or Postgres.', ['sqlite', 'postgres', 'mysql', 'gres'])).toEqual(['sqlite', 'postgres']);
    expect(sentences('One. Two!\nThree')).toEqual(['One.', 'Two!', 'Three']);
  });
});

describe('AAAK encoder', () => {
  const drawer = {
    drawer_id: 'drawer_0123456789abcdef01234567',
    wing: 'palace',
    room: 'decisions',
    filed_at: '2026-03-04T05:06:07Z',
    content: '# Storage choice\nWe decided to keep the Logstream in SQLite. The Logstream must survive a crash; Alice said "fsync or bust" | twice.\nSQLite WAL mode does that.',
    metadata: { importance: 4 },
  };

  it('writes a header and a body line from the verbatim text, the same every time', () => {
    const a = encodeAaak(drawer);
    expect(encodeAaak(drawer)).toEqual(a);
    const [header, body] = a.text.split('\n');
    expect(header).toBe('H|palace/decisions|2026-03-04|LOG|Storage choice');
    expect(body).toBe('Z|LOG+SQL+ALI+WAL|logstream_sqlite_storage_choice|"We decided to keep the Logstream in SQLite."|5|DECISION+CORE');
    expect(a.entities).toEqual([
      { code: 'LOG', name: 'Logstream' },
      { code: 'SQL', name: 'SQLite' },
      { code: 'ALI', name: 'Alice' },
      { code: 'WAL', name: 'WAL' },
    ]);
    expect(a.flags).toEqual(['DECISION', 'CORE']);
    // importance 4, +1 for DECISION/CORE, capped at 5.
    expect(a.weight).toBe(5);
    expect(a.token_estimate).toBe(Math.ceil(a.text.length / 3.8));
  });

  it('keeps fields free of separators and cuts the quote', () => {
    const a = encodeAaak({ ...drawer, content: 'Then Alice said "fsync | or bust" when the Logstream lost a WAL page.' });
    expect(a.quote).toBe("Then Alice said 'fsync / or bust' when the Logstream lost a WAL page.");
    expect(a.text.split('\n')).toHaveLength(2);
    expect(a.text.split('\n')[1]?.split('|')).toHaveLength(6);
    const long = encodeAaak({ ...drawer, content: `Postgres ${'and Postgres again '.repeat(20)}is what we chose.` });
    expect(long.quote.length).toBeLessThanOrEqual(AAAK_LIMITS.quoteChars);
    expect(long.quote.endsWith('…')).toBe(true);
  });

  it('gives clashing entity codes distinct letters', () => {
    const a = encodeAaak({ ...drawer, content: 'Notes on Postgres and PostHog and Postman.' });
    expect(a.entities.map((e) => e.code)).toEqual(['POS', 'POT', 'POM']);
  });
});
