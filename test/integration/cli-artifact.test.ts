// `palace artifact put|get` as real child processes: content is stored and returned byte-for-byte,
// patch warnings go to stderr without changing anything, and bad input gives the documented exit codes.

import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import {
  makeTempPalace,
  parseJson,
  type CliResult,
  type ErrorJson,
  type TempPalace,
} from '../helpers/cli.js';

interface StoredJson {
  id: string;
  kind: string;
  created_by: string;
  sha256: string;
  size_bytes: number;
  warnings?: string[];
}

interface ArtifactJson extends StoredJson {
  content: string;
}

let palace: TempPalace;

beforeEach(() => {
  palace = makeTempPalace();
});

afterEach(async () => {
  await palace.cleanup();
});

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

function put(content: Buffer, kind = 'patch', extra: string[] = []): Promise<CliResult> {
  return palace.run(['artifact', 'put', '--kind', kind, '--created-by', 'box-codex', '--json', ...extra], {
    stdin: content,
  });
}

function warningLines(stderr: string): string[] {
  return stderr.split('\n').filter((line) => line.startsWith('Warning: '));
}

/** Stores `content`, reads it back (raw and --json) and checks bytes, size and hash all agree. */
async function roundTrip(
  content: Buffer,
  kind = 'patch',
): Promise<{ stored: StoredJson; putResult: CliResult }> {
  const putResult = await put(content, kind);
  expect(putResult.code, putResult.stderr).toBe(0);
  const stored = parseJson<StoredJson>(putResult);
  expect(stored.sha256).toBe(sha256(content));
  expect(stored.size_bytes).toBe(content.length);
  expect(stored.kind).toBe(kind);
  expect(stored.created_by).toBe('box-codex');

  const raw = await palace.run(['artifact', 'get', stored.id]);
  expect(raw.code, raw.stderr).toBe(0);
  expect(raw.stdoutBytes.equals(content)).toBe(true);
  expect(sha256(raw.stdoutBytes)).toBe(stored.sha256);

  const meta = await palace.run(['artifact', 'get', stored.id, '--json']);
  expect(meta.code).toBe(0);
  const artifact = parseJson<ArtifactJson>(meta);
  expect(artifact.sha256).toBe(stored.sha256);
  expect(artifact.size_bytes).toBe(content.length);
  expect(Buffer.from(artifact.content, 'utf8').equals(content)).toBe(true);
  return { stored, putResult };
}

describe('byte-exact artifacts', () => {
  it('a clean LF patch round-trips with no warnings; text output names id, sha256 and size', async () => {
    const patch = Buffer.from(
      'diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+new\n',
      'utf8',
    );
    const { putResult } = await roundTrip(patch);
    expect(warningLines(putResult.stderr)).toEqual([]);

    const text = await palace.run(['artifact', 'put', '--kind', 'patch', '--created-by', 'box-codex'], {
      stdin: patch,
    });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^Stored art_\S+ {2}kind=patch$/m);
    expect(text.stdout).toContain(`sha256=${sha256(patch)}`);
    expect(text.stdout).toContain(`size=${patch.length} bytes`);
  }, 60_000);

  it('CRLF content warns on stderr, exits 0 and is preserved exactly', async () => {
    const patch = Buffer.from(
      'diff --git a/w.txt b/w.txt\r\n--- a/w.txt\r\n+++ b/w.txt\r\n@@ -1 +1 @@\r\n-a\r\n+b\r\n',
      'utf8',
    );
    const { stored, putResult } = await roundTrip(patch);
    const warnings = warningLines(putResult.stderr);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/carriage return|CRLF/i);
    expect(stored.warnings).toHaveLength(1);
  }, 60_000);

  it('content without a final newline warns on stderr, exits 0 and is preserved exactly', async () => {
    const patch = Buffer.from('diff --git a/n.txt b/n.txt\n@@ -1 +1 @@\n-a\n+b', 'utf8');
    const { stored, putResult } = await roundTrip(patch);
    const warnings = warningLines(putResult.stderr);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/newline/i);
    expect(stored.warnings).toHaveLength(1);

    // Both problems at once: two warnings, still stored as given.
    const both = await roundTrip(Buffer.from('line one\r\nline two', 'utf8'));
    expect(warningLines(both.putResult.stderr)).toHaveLength(2);

    // Warnings are about patches only.
    const log = await roundTrip(Buffer.from('a log\r\nwithout final newline', 'utf8'), 'log');
    expect(warningLines(log.putResult.stderr)).toEqual([]);
    expect(log.stored.warnings).toBeUndefined();
  }, 60_000);

  it('multibyte UTF-8 and a leading BOM are preserved', async () => {
    const content = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from(
        'héllo wörld — 日本語テキスト — emoji 🎉🧪 — combining é\n\ttabs and trailing spaces   \n',
        'utf8',
      ),
    ]);
    const { stored } = await roundTrip(content, 'file');
    expect(stored.size_bytes).toBe(content.length);
    expect(stored.size_bytes).toBeGreaterThan(content.toString('utf8').length);
  }, 60_000);

  it('--file reads a file byte-exactly and get --out writes the exact bytes', async () => {
    const content = Buffer.from('{"report": "ok", "unicode": "ñ"}', 'utf8');
    const source = join(palace.root, 'report.json');
    writeFileSync(source, content);
    const result = await palace.run([
      'artifact',
      'put',
      '--kind',
      'json',
      '--created-by',
      'box-codex',
      '--file',
      source,
      '--json',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const stored = parseJson<StoredJson>(result);
    expect(stored.sha256).toBe(sha256(content));

    const target = join(palace.root, 'out.json');
    const out = await palace.run(['artifact', 'get', stored.id, '--out', target]);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain(`Wrote ${content.length} bytes to ${target}`);
    expect(readFileSync(target).equals(content)).toBe(true);

    const outJson = await palace.run(['artifact', 'get', stored.id, '--out', target, '--json']);
    const meta = parseJson<Record<string, unknown>>(outJson);
    expect(meta.content).toBeUndefined();
    expect(meta.content_written_to).toBe(target);
    expect(meta.sha256).toBe(stored.sha256);
  }, 60_000);

  it('a 1 MiB artifact round-trips exactly', async () => {
    const line = 'abcdefghijklmnopqrstuvwxyz0123456789 ünï 🎉\n';
    const content = Buffer.from(line.repeat(Math.ceil((1024 * 1024) / Buffer.byteLength(line))), 'utf8');
    await roundTrip(content, 'log');
  }, 60_000);
});

describe('artifact errors and exit codes', () => {
  it('invalid UTF-8 on stdin exits 2 with an error naming stdin', async () => {
    const bad = Buffer.from([0x64, 0x69, 0x66, 0x66, 0x0a, 0xff, 0xfe, 0x0a]);
    const text = await palace.run(['artifact', 'put', '--kind', 'patch', '--created-by', 'box-codex'], {
      stdin: bad,
    });
    expect(text.code).toBe(2);
    expect(text.stderr).toMatch(/^Error: .*stdin/m);
    expect(text.stdout).toBe('');

    const json = await put(bad);
    expect(json.code).toBe(2);
    const err = parseJson<ErrorJson>(json);
    expect(err.error.code).toBe('input.invalid');
    expect(err.error.message).toContain('stdin');
  }, 60_000);

  it('empty content exits 2', async () => {
    const result = await put(Buffer.alloc(0));
    expect(result.code).toBe(2);
    expect(parseJson<ErrorJson>(result).error.code).toBe('input.invalid');
    const text = await palace.run(['artifact', 'put', '--kind', 'note', '--created-by', 'box-codex'], {
      stdin: Buffer.alloc(0),
    });
    expect(text.code).toBe(2);
    expect(text.stderr).toMatch(/^Error: /m);
  }, 60_000);

  it('content over 4 MiB exits 2', async () => {
    const result = await put(Buffer.alloc(4 * 1024 * 1024 + 1, 0x61), 'log');
    expect(result.code).toBe(2);
    expect(parseJson<ErrorJson>(result).error.code).toBe('input.too_large');
  }, 60_000);

  it('a kind of any lowercase words with dashes round-trips (kind is open)', async () => {
    await roundTrip(Buffer.from('1 passed, 0 failed\n'), 'test-log');
  }, 60_000);

  it('a malformed kind or a missing --created-by exits 2', async () => {
    const kind = await put(Buffer.from('x\n'), 'Binary_Blob');
    expect(kind.code).toBe(2);
    expect(parseJson<ErrorJson>(kind).error).toMatchObject({ code: 'input.invalid', field: 'kind' });
    const missing = await palace.run(['artifact', 'put', '--kind', 'patch'], { stdin: Buffer.from('x\n') });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--created-by');
  }, 60_000);

  it('get of an unknown id exits 1; --json errors are {"error":{"code",...}} on stdout', async () => {
    await put(Buffer.from('something\n'));
    const missing = 'art_20200101T000000_000000000000';
    const text = await palace.run(['artifact', 'get', missing]);
    expect(text.code).toBe(1);
    expect(text.stdout).toBe('');
    expect(text.stderr).toContain(`Error: artifact '${missing}' not found`);

    const json = await palace.run(['artifact', 'get', missing, '--json']);
    expect(json.code).toBe(1);
    const body = parseJson<ErrorJson>(json);
    expect(Object.keys(body)).toEqual(['error']);
    expect(body.error.code).toBe('artifact.not_found');
    expect(body.error.message).toContain(missing);
    expect(json.stderr).not.toContain('Error:');
  }, 60_000);
});
