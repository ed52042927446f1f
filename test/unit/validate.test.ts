import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { ACK_STATUSES, ARTIFACT_KINDS, ARTIFACT_KIND_MAX, EVENT_STATUSES } from '../../hub/src/core/types.js';
import {
  LIMITS,
  ackStatus,
  artifactContent,
  artifactIds,
  artifactKind,
  createdAtBound,
  eventBody,
  eventQuery,
  eventStatus,
  eventType,
  metadataJson,
  patchWarnings,
  requiredField,
  routingField,
  utf8Length,
  waitTimeout,
} from '../../hub/src/core/validate.js';
import { catchHubError } from '../helpers/errors.js';

const KIB = 1024;

/** True when the string holds a C0 control character or DEL (written without a control-char regex). */
function hasControl(text: string): boolean {
  return [...text].some((ch) => {
    const code = ch.codePointAt(0) ?? 0;
    return code < 0x20 || code === 0x7f;
  });
}
const MIB = 1024 * 1024;

describe('LIMITS', () => {
  it('match the spec values', () => {
    expect(LIMITS.routingFieldChars).toBe(256);
    expect(LIMITS.bodyBytes).toBe(262_144);
    expect(LIMITS.metadataBytes).toBe(65_536);
    expect(LIMITS.artifactBytes).toBe(4_194_304);
    expect(LIMITS.listDefault).toBe(50);
    expect(LIMITS.listMax).toBe(500);
    expect(LIMITS.waitDefaultMs).toBe(60_000);
    expect(LIMITS.waitMaxMs).toBe(300_000);
    expect(LIMITS.previewChars).toBe(200);
  });

  it('utf8Length counts bytes, not UTF-16 units', () => {
    expect(utf8Length('')).toBe(0);
    expect(utf8Length('abc')).toBe(3);
    expect(utf8Length('é')).toBe(2);
    expect(utf8Length('€')).toBe(3);
    expect(utf8Length('😀')).toBe(4);
  });
});

describe('eventType', () => {
  it.each([
    'task.request',
    'task.reply',
    'patch.ready',
    'event.ack',
    'status',
    'a',
    '0',
    'a_b-c.d',
    'x'.repeat(64),
  ])('accepts %s', (value) => {
    expect(eventType(value)).toBe(value);
  });

  it('trims surrounding whitespace', () => {
    expect(eventType('  task.request \t')).toBe('task.request');
  });

  it.each([
    'Task.request',
    'TASK',
    '.task',
    '-task',
    '_task',
    'task request',
    'task/request',
    'tâche',
    'task:request',
    'x'.repeat(65),
  ])('rejects %j with input.invalid on type', (value) => {
    const err = catchHubError(() => eventType(value));
    expect(err.code).toBe('input.invalid');
    expect(err.field).toBe('type');
  });

  it.each([undefined, null, ''])('requires a value (%j)', (value) => {
    const err = catchHubError(() => eventType(value));
    expect(err.code).toBe('input.invalid');
    expect(err.field).toBe('type');
    expect(err.message).toMatch(/required/);
  });

  it('rejects a blank type and a non-string type', () => {
    expect(catchHubError(() => eventType('   ')).message).toMatch(/blank/);
    expect(catchHubError(() => eventType(42)).field).toBe('type');
  });

  it('reports the field name it was given', () => {
    expect(catchHubError(() => eventType('BAD', 'types')).field).toBe('types');
  });

  it('accepts exactly the strings matching the documented pattern', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 70 }), (s) => {
        const expected = /^[a-z0-9][a-z0-9_.-]{0,63}$/.test(s);
        let ok = true;
        try {
          eventType(s);
        } catch {
          ok = false;
        }
        // Whitespace is trimmed first, so only compare on strings without surrounding whitespace.
        if (s.trim() === s) expect(ok).toBe(expected);
      }),
    );
  });
});

describe('routingField', () => {
  it('treats undefined, null and empty string as absent', () => {
    expect(routingField('to_agent', undefined)).toBeNull();
    expect(routingField('to_agent', null)).toBeNull();
    expect(routingField('to_agent', '')).toBeNull();
  });

  it('fails a required field that is absent, naming the field', () => {
    for (const value of [undefined, null, '']) {
      const err = catchHubError(() => routingField('stream', value, true));
      expect(err.code).toBe('input.invalid');
      expect(err.field).toBe('stream');
    }
    expect(catchHubError(() => requiredField('from_agent', undefined)).field).toBe('from_agent');
  });

  it('trims and keeps slashes, dots and broadcast stars', () => {
    expect(routingField('stream', '  project/palace  ')).toBe('project/palace');
    expect(routingField('to_agent', '*')).toBe('*');
    expect(requiredField('from_agent', 'box-claude.code')).toBe('box-claude.code');
  });

  it('rejects whitespace-only values even when optional', () => {
    for (const value of [' ', '\t', '  \n ']) {
      const err = catchHubError(() => routingField('room', value));
      expect(err.code).toBe('input.invalid');
      expect(err.field).toBe('room');
      expect(err.message).toMatch(/blank/);
    }
  });

  it('allows 256 characters and rejects 257', () => {
    expect(routingField('stream', 'a'.repeat(256))).toHaveLength(256);
    const err = catchHubError(() => routingField('stream', 'a'.repeat(257)));
    expect(err.code).toBe('input.invalid');
    expect(err.field).toBe('stream');
    expect(err.message).toMatch(/256/);
  });

  it('counts the length in code points, not UTF-16 units', () => {
    expect(routingField('room', '😀'.repeat(256))).toBe('😀'.repeat(256));
    expect(catchHubError(() => routingField('room', '😀'.repeat(257))).field).toBe('room');
  });

  it('measures the length after trimming', () => {
    expect(routingField('room', `  ${'a'.repeat(256)}  `)).toBe('a'.repeat(256));
  });

  it.each([
    ['a\u0000b', 'NUL'],
    ['a\u0001b', 'SOH'],
    ['a\tb', 'tab'],
    ['a\nb', 'newline'],
    ['a\rb', 'carriage return'],
    ['a\u001bb', 'escape'],
    ['a\u001fb', 'unit separator'],
    ['a\u007fb', 'DEL'],
  ])('rejects an inner control character (%j, %s)', (value) => {
    const err = catchHubError(() => routingField('to_agent', value));
    expect(err.code).toBe('input.invalid');
    expect(err.field).toBe('to_agent');
    expect(err.message).toMatch(/control/);
  });

  it('rejects lone surrogates but accepts proper pairs', () => {
    expect(catchHubError(() => routingField('room', 'a\uD800b')).field).toBe('room');
    expect(catchHubError(() => routingField('room', 'a\uDC00b')).field).toBe('room');
    expect(catchHubError(() => routingField('room', '\uDFFF\uD800')).field).toBe('room');
    expect(routingField('room', 'a\uD83D\uDE00b')).toBe('a😀b');
  });

  it.each([42, true, {}, [], ['a']])('rejects a non-string value (%j)', (value) => {
    const err = catchHubError(() => routingField('branch', value));
    expect(err.code).toBe('input.invalid');
    expect(err.field).toBe('branch');
  });

  it('returns the trimmed value for any printable, non-blank value of at most 256 code points', () => {
    const printable = fc
      .string({ unit: 'grapheme', minLength: 1, maxLength: 256 })
      .filter((s) => !hasControl(s) && s.trim() !== '' && [...s.trim()].length <= 256);
    fc.assert(
      fc.property(printable, (s) => {
        expect(routingField('room', s)).toBe(s.trim());
      }),
    );
  });

  it('rejects any value with a control character between printable characters', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 20 }).filter((s) => s.trim() !== '' && !hasControl(s)),
        fc.integer({ min: 0, max: 0x20 }).map((n) => (n === 0x20 ? '\u007f' : String.fromCharCode(n))),
        (s, control) => {
          const err = catchHubError(() => routingField('room', `x${s}${control}${s}x`));
          expect(err.field).toBe('room');
        },
      ),
    );
  });
});

describe('eventStatus', () => {
  it.each([...EVENT_STATUSES])('accepts %s', (status) => {
    expect(eventStatus(status)).toBe(status);
  });

  it('covers exactly the seven spec statuses', () => {
    expect([...EVENT_STATUSES].sort()).toEqual(
      ['applied', 'blocked', 'claimed', 'failed', 'open', 'ready', 'superseded'].sort(),
    );
  });

  it.each([undefined, null, ''])('treats %j as no status', (value) => {
    expect(eventStatus(value)).toBeNull();
  });

  it.each(['OPEN', 'Open', 'done', 'closed', ' open', 3, true, {}])('rejects %j', (value) => {
    const err = catchHubError(() => eventStatus(value));
    expect(err.code).toBe('input.invalid');
    expect(err.field).toBe('status');
  });
});

describe('ackStatus', () => {
  it.each([...ACK_STATUSES])('accepts %s', (status) => {
    expect(ackStatus(status)).toBe(status);
  });

  it('is claimed, applied, failed or blocked', () => {
    expect([...ACK_STATUSES].sort()).toEqual(['applied', 'blocked', 'claimed', 'failed']);
  });

  it('allows a plain ack without status', () => {
    expect(ackStatus(undefined)).toBeNull();
    expect(ackStatus(null)).toBeNull();
    expect(ackStatus('')).toBeNull();
  });

  it.each(['open', 'ready', 'superseded', 'done', 'Claimed', 1])('rejects %j', (value) => {
    const err = catchHubError(() => ackStatus(value));
    expect(err.code).toBe('input.invalid');
    expect(err.field).toBe('status');
  });
});

describe('eventBody', () => {
  it('defaults to the empty string and accepts an empty body', () => {
    expect(eventBody(undefined)).toBe('');
    expect(eventBody(null)).toBe('');
    expect(eventBody('')).toBe('');
  });

  it('keeps the body verbatim (no trimming, CRLF kept)', () => {
    const body = '  Goal:\r\n\tdo it  \n\n';
    expect(eventBody(body)).toBe(body);
  });

  it('rejects a non-string body', () => {
    for (const value of [42, {}, ['a'], true]) {
      const err = catchHubError(() => eventBody(value));
      expect(err.code).toBe('input.invalid');
      expect(err.field).toBe('body');
    }
  });

  it('rejects NUL and lone surrogates', () => {
    expect(catchHubError(() => eventBody('a\u0000b')).field).toBe('body');
    expect(catchHubError(() => eventBody('a\uD800')).field).toBe('body');
    expect(catchHubError(() => eventBody('\uDC00a')).field).toBe('body');
  });

  it('allows control characters other than NUL', () => {
    expect(eventBody('a\tb\u0001c\u007f')).toBe('a\tb\u0001c\u007f');
  });

  it('allows exactly 256 KiB and rejects one byte more with input.too_large', () => {
    expect(eventBody('a'.repeat(256 * KIB))).toHaveLength(256 * KIB);
    const err = catchHubError(() => eventBody('a'.repeat(256 * KIB + 1)));
    expect(err.code).toBe('input.too_large');
    expect(err.field).toBe('body');
    expect(err.message).toContain(String(256 * KIB + 1));
  });

  it('measures the limit in UTF-8 bytes', () => {
    // 131 072 two-byte characters are exactly 256 KiB; one more ASCII byte is too much.
    expect(eventBody('é'.repeat(128 * KIB))).toHaveLength(128 * KIB);
    expect(catchHubError(() => eventBody('é'.repeat(128 * KIB) + 'a')).code).toBe('input.too_large');
  });
});

describe('metadataJson', () => {
  it('defaults to an empty object', () => {
    expect(metadataJson(undefined)).toBe('{}');
    expect(metadataJson(null)).toBe('{}');
    expect(metadataJson({})).toBe('{}');
  });

  it('serializes with sorted keys at every depth, keeping array order', () => {
    expect(metadataJson({ b: 1, a: { d: [3, 1, 2], c: 'x' } })).toBe('{"a":{"c":"x","d":[3,1,2]},"b":1}');
    expect(metadataJson({ z: [{ b: 2, a: 1 }] })).toBe('{"z":[{"a":1,"b":2}]}');
  });

  it('round-trips through JSON.parse', () => {
    const value = { ack_of: 'evt_x', n: 1.5, ok: true, none: null, list: ['a', 'ü', '😀'] };
    expect(JSON.parse(metadataJson(value))).toEqual(value);
  });

  it.each([[[1, 2]], ['text'], [42], [true]])('rejects a non-object (%j)', (value) => {
    const err = catchHubError(() => metadataJson(value));
    expect(err.code).toBe('input.invalid');
    expect(err.field).toBe('metadata');
  });

  it('rejects values that are not JSON-serializable', () => {
    expect(catchHubError(() => metadataJson({ n: 10n })).field).toBe('metadata');
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const err = catchHubError(() => metadataJson(circular));
    expect(err.code).toBe('input.invalid');
    expect(err.field).toBe('metadata');
  });

  it('allows exactly 64 KiB of JSON and rejects one byte more with input.too_large', () => {
    const overhead = '{"k":""}'.length;
    expect(utf8Length(metadataJson({ k: 'a'.repeat(64 * KIB - overhead) }))).toBe(64 * KIB);
    const err = catchHubError(() => metadataJson({ k: 'a'.repeat(64 * KIB - overhead + 1) }));
    expect(err.code).toBe('input.too_large');
    expect(err.field).toBe('metadata');
  });
});

describe('artifactIds', () => {
  it('defaults to an empty list', () => {
    expect(artifactIds(undefined)).toEqual([]);
    expect(artifactIds(null)).toEqual([]);
    expect(artifactIds([])).toEqual([]);
  });

  it('accepts a single id as a string', () => {
    expect(artifactIds('art_20260131T120000_000000000001')).toEqual(['art_20260131T120000_000000000001']);
  });

  it('trims and dedupes, keeping first-seen order', () => {
    expect(artifactIds(['art_b', ' art_a ', 'art_b', 'art_a', 'art_c'])).toEqual(['art_b', 'art_a', 'art_c']);
  });

  it('rejects non-lists and blank or non-string items', () => {
    for (const value of [42, { id: 'x' }, true])
      expect(catchHubError(() => artifactIds(value)).field).toBe('artifact_ids');
    for (const value of [[''], ['  '], [null], [5], ['art_a', {}]])
      expect(catchHubError(() => artifactIds(value)).code).toBe('input.invalid');
  });
});

describe('artifactKind', () => {
  it.each([...ARTIFACT_KINDS])('accepts %s', (kind) => {
    expect(artifactKind(kind)).toBe(kind);
  });

  it('includes patch, file, log, json and note', () => {
    expect(ARTIFACT_KINDS).toEqual(expect.arrayContaining(['patch', 'file', 'log', 'json', 'note']));
  });

  // The spec's kind is open ("other kinds include generated files, test logs, JSON reports").
  it.each(['test-log', 'diff', 'binary', 'json-report', 'coverage2', 'a', 'k'.repeat(ARTIFACT_KIND_MAX)])(
    'accepts the well-formed kind %j',
    (kind) => {
      expect(artifactKind(kind)).toBe(kind);
      expect(artifactKind(` ${kind} `)).toBe(kind);
    },
  );

  it.each([
    'Patch',
    'test_log',
    'test.log',
    'test--log',
    '-log',
    'log-',
    '2log',
    'test log',
    'k'.repeat(ARTIFACT_KIND_MAX + 1),
    undefined,
    '',
    7,
  ])('rejects %j naming the rule', (value) => {
    const err = catchHubError(() => artifactKind(value));
    expect(err.code).toBe('input.invalid');
    expect(err.field).toBe('kind');
    if (typeof value === 'string' && value !== '') expect(err.message).toMatch(/lowercase words joined by dashes/);
  });
});

describe('artifactContent', () => {
  it('returns the content unchanged with its UTF-8 byte length', () => {
    expect(artifactContent('a\r\nb')).toEqual({ content: 'a\r\nb', bytes: 4 });
    expect(artifactContent('é😀')).toEqual({ content: 'é😀', bytes: 6 });
  });

  it('rejects empty and non-string content', () => {
    for (const value of ['', undefined, null, 42, Buffer.from('x'), ['x']]) {
      const err = catchHubError(() => artifactContent(value));
      expect(err.code).toBe('input.invalid');
      expect(err.field).toBe('content');
    }
  });

  it('rejects NUL bytes and lone surrogates (UTF-8 text only)', () => {
    expect(catchHubError(() => artifactContent('diff\u0000')).field).toBe('content');
    expect(catchHubError(() => artifactContent('diff \uD800\n')).field).toBe('content');
    expect(catchHubError(() => artifactContent('\uDC00')).field).toBe('content');
  });

  it('allows exactly 4 MiB and rejects one byte more with input.too_large', () => {
    expect(artifactContent('a'.repeat(4 * MIB)).bytes).toBe(4 * MIB);
    const err = catchHubError(() => artifactContent('a'.repeat(4 * MIB + 1)));
    expect(err.code).toBe('input.too_large');
    expect(err.field).toBe('content');
  });

  it('measures the 4 MiB limit in UTF-8 bytes', () => {
    // 1 MiB of 4-byte characters is exactly 4 MiB.
    expect(artifactContent('😀'.repeat(MIB)).bytes).toBe(4 * MIB);
    expect(catchHubError(() => artifactContent('😀'.repeat(MIB) + '\n')).code).toBe('input.too_large');
  });
});

describe('patchWarnings', () => {
  const clean = 'diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n';

  it('is silent for a clean LF patch', () => {
    expect(patchWarnings('patch', clean)).toEqual([]);
  });

  it('warns when the final newline is missing', () => {
    const warnings = patchWarnings('patch', clean.slice(0, -1));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/newline/);
  });

  it('warns on CRLF line endings', () => {
    const warnings = patchWarnings('patch', clean.replaceAll('\n', '\r\n'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/CRLF|carriage/);
  });

  it('gives both warnings when both apply', () => {
    expect(patchWarnings('patch', 'a\r\nb')).toHaveLength(2);
  });

  it('never warns for other kinds', () => {
    for (const kind of ARTIFACT_KINDS.filter((k) => k !== 'patch'))
      expect(patchWarnings(kind, 'a\r\nb')).toEqual([]);
  });
});

describe('createdAtBound (since_created_at)', () => {
  it.each([undefined, null, ''])('treats %j as no bound', (value) => {
    expect(createdAtBound(value)).toBeNull();
  });

  it.each([
    ['2026-01-31', '2026-01-31T00:00:00Z'],
    ['  2026-01-31 ', '2026-01-31T00:00:00Z'],
    ['2026-01-31T12:34:56Z', '2026-01-31T12:34:56Z'],
    ['2026-01-31T12:34:56.789Z', '2026-01-31T12:34:56Z'],
    ['2026-01-31T12:34Z', '2026-01-31T12:34:00Z'],
    ['2026-01-31T12:00:00+02:00', '2026-01-31T10:00:00Z'],
    ['2026-01-31T23:30:00-01:00', '2026-02-01T00:30:00Z'],
    ['2024-02-29', '2024-02-29T00:00:00Z'],
  ])('normalizes %j to %j', (input, expected) => {
    expect(createdAtBound(input)).toBe(expected);
  });

  it.each([
    '2026-01-31T12:00:00',
    '2026-01-31 12:00:00Z',
    '31/01/2026',
    '2026-1-31',
    '20260131',
    'yesterday',
    '2026-13-01',
    '2026-00-10',
    '2026-01-32',
    '2026-02-30',
    '2025-02-29',
    '2026-04-31T00:00:00Z',
  ])('rejects %j', (input) => {
    const err = catchHubError(() => createdAtBound(input));
    expect(err.code).toBe('input.invalid');
    expect(err.field).toBe('since_created_at');
  });

  it('rejects non-strings', () => {
    expect(catchHubError(() => createdAtBound(1_700_000_000_000)).field).toBe('since_created_at');
  });
});

describe('waitTimeout', () => {
  it('defaults to 60 s', () => {
    expect(waitTimeout(undefined)).toBe(60_000);
    expect(waitTimeout(null)).toBe(60_000);
    expect(waitTimeout('')).toBe(60_000);
  });

  it('accepts 0 through 300 000 ms, numbers or numeric strings', () => {
    expect(waitTimeout(0)).toBe(0);
    expect(waitTimeout(300_000)).toBe(300_000);
    expect(waitTimeout('1500')).toBe(1500);
    expect(waitTimeout(' 250 ')).toBe(250);
    expect(waitTimeout(12.9)).toBe(12);
    expect(waitTimeout('1.7')).toBe(1);
  });

  it.each([-1, 300_001, Number.NaN, Number.POSITIVE_INFINITY, '-5', 'abc', '10s', true, {}])(
    'rejects %j',
    (value) => {
      const err = catchHubError(() => waitTimeout(value));
      expect(err.code).toBe('input.invalid');
      expect(err.field).toBe('timeout_ms');
    },
  );
});

describe('eventQuery', () => {
  it('has the documented defaults', () => {
    expect(eventQuery({})).toEqual({
      to_agent: [],
      exclude_from_agent: [],
      from_agent: [],
      type: [],
      status: [],
      correlation_id: [],
      stream: [],
      room: [],
      since_event_id: null,
      before_event_id: null,
      since_created_at: null,
      limit: 50,
      order: 'asc',
      preview: false,
    });
  });

  it('accepts limits from 1 to 500, as numbers or digit strings', () => {
    expect(eventQuery({ limit: 1 }).limit).toBe(1);
    expect(eventQuery({ limit: 500 }).limit).toBe(500);
    expect(eventQuery({ limit: '25' }).limit).toBe(25);
    expect(eventQuery({ limit: '' }).limit).toBe(50);
  });

  it.each([0, -1, 501, 1.5, '0', '501', 'ten', '10x', Number.NaN, true])('rejects limit %j', (limit) => {
    const err = catchHubError(() => eventQuery({ limit }));
    expect(err.code).toBe('input.invalid');
    expect(err.field).toBe('limit');
  });

  it('accepts asc and desc only', () => {
    expect(eventQuery({ order: 'desc' }).order).toBe('desc');
    expect(eventQuery({ order: 'asc' }).order).toBe('asc');
    for (const order of ['DESC', 'up', 1])
      expect(catchHubError(() => eventQuery({ order })).field).toBe('order');
  });

  it('parses preview flags', () => {
    expect(eventQuery({ preview: true }).preview).toBe(true);
    expect(eventQuery({ preview: 'true' }).preview).toBe(true);
    expect(eventQuery({ preview: '1' }).preview).toBe(true);
    expect(eventQuery({ preview: false }).preview).toBe(false);
    expect(eventQuery({ preview: '0' }).preview).toBe(false);
    expect(catchHubError(() => eventQuery({ preview: 'yes' })).field).toBe('preview');
  });

  it('turns a single value into a one-element filter', () => {
    const q = eventQuery({
      to_agent: 'box-codex',
      type: 'task.request',
      status: 'open',
      stream: 'project/x',
    });
    expect(q.to_agent).toEqual(['box-codex']);
    expect(q.type).toEqual(['task.request']);
    expect(q.status).toEqual(['open']);
    expect(q.stream).toEqual(['project/x']);
  });

  it('dedupes repeated filter values (after trimming) and drops empty ones', () => {
    const q = eventQuery({
      to_agent: ['a', 'b', 'a', ' a ', ''],
      exclude_from_agent: ['x', 'x'],
      from_agent: ['w', 'w'],
      type: ['status', 'status', 'task.reply'],
      status: ['open', 'open', 'ready', ''],
      correlation_id: ['task_1', 'task_1'],
      stream: ['s', 's'],
      room: ['r', 'r'],
    });
    expect(q.to_agent).toEqual(['a', 'b']);
    expect(q.exclude_from_agent).toEqual(['x']);
    expect(q.from_agent).toEqual(['w']);
    expect(q.type).toEqual(['status', 'task.reply']);
    expect(q.status).toEqual(['open', 'ready']);
    expect(q.correlation_id).toEqual(['task_1']);
    expect(q.stream).toEqual(['s']);
    expect(q.room).toEqual(['r']);
  });

  it('validates every element of a multi-value filter', () => {
    expect(catchHubError(() => eventQuery({ type: ['status', 'Bad Type'] })).field).toBe('type');
    expect(catchHubError(() => eventQuery({ status: ['open', 'done'] })).field).toBe('status');
    expect(catchHubError(() => eventQuery({ to_agent: ['a', 'b\nc'] })).field).toBe('to_agent');
    expect(catchHubError(() => eventQuery({ room: ['  '] })).field).toBe('room');
    expect(catchHubError(() => eventQuery({ exclude_from_agent: [5] })).field).toBe('exclude_from_agent');
  });

  it('trims cursors and normalizes since_created_at', () => {
    const q = eventQuery({
      since_event_id: ' evt_a ',
      before_event_id: 'evt_b',
      since_created_at: '2026-01-31',
    });
    expect(q.since_event_id).toBe('evt_a');
    expect(q.before_event_id).toBe('evt_b');
    expect(q.since_created_at).toBe('2026-01-31T00:00:00Z');
    expect(catchHubError(() => eventQuery({ since_event_id: 'a\u0000' })).field).toBe('since_event_id');
    expect(catchHubError(() => eventQuery({ since_created_at: 'soon' })).field).toBe('since_created_at');
  });
});
