// Logstream.getArtifactBytes: an artifact's exact stored bytes as a Buffer straight from SQLite (no
// decode to a string and back), with the same metadata and not-found error as getArtifact.

import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { HubError } from '../../hub/src/errors.js';
import { Logstream } from '../../hub/src/logstream/logstream.js';

let dir: string;
let log: Logstream;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'palace-artifact-bytes-'));
  log = Logstream.open(dir);
});

afterEach(() => {
  log.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('Logstream.getArtifactBytes', () => {
  it('returns the exact UTF-8 bytes stored (BOM, CRLF, multibyte, astral) with matching metadata', () => {
    const content = '\uFEFFdiff --git a/ü b/ü\r\n+ 日本語 😀\ntail';
    const stored = log.putArtifact({ kind: 'patch', created_by: 'agent-a', content });
    const { meta, bytes } = log.getArtifactBytes(stored.id);
    expect(Buffer.isBuffer(bytes)).toBe(true);
    expect(bytes.equals(Buffer.from(content, 'utf8'))).toBe(true);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(stored.sha256);
    const { content: text, ...expected } = log.getArtifact(stored.id);
    expect(meta).toEqual(expected);
    expect(Buffer.from(text, 'utf8').equals(bytes)).toBe(true);
    expect(meta.size_bytes).toBe(bytes.length);
  });

  it('names a missing artifact as artifact.not_found on artifact_id, and a bad id as input', () => {
    expect(() => log.getArtifactBytes('art_missing')).toThrow(HubError);
    try {
      log.getArtifactBytes('art_missing');
    } catch (err) {
      expect((err as HubError).code).toBe('artifact.not_found');
      expect((err as HubError).field).toBe('artifact_id');
    }
    expect(() => log.getArtifactBytes(42)).toThrow(/artifact_id/);
  });
});
