// Transcript formats, exchange chunking, HTML extraction, transcript splitting, the source adapter
// registry and the project walker (skip lists, .gitignore), on fixtures written here.

import { readFileSync, existsSync } from 'node:fs';
import { join, relative } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import type { HubError } from '../../hub/src/errors.js';
import { resolveAdapter } from '../../hub/src/mine/adapters.js';
import { exchangeChunks, parseTranscript } from '../../hub/src/mine/convos.js';
import { htmlToText } from '../../hub/src/mine/extract.js';
import { chunksFor } from '../../hub/src/mine/miner.js';
import { splitTranscripts } from '../../hub/src/mine/split.js';
import { listFiles, PROJECT_EXTENSIONS } from '../../hub/src/mine/walk.js';
import { makeTmpDir, type TmpDir } from '../helpers/tmp-dir.js';
import { A1, A2, FORMAT_OF, Q1, Q2, REPO, TRANSCRIPTS, writeTree } from '../helpers/transcripts.js';

let tmp: TmpDir | undefined;
afterEach(() => {
  tmp?.cleanup();
  tmp = undefined;
});

describe('transcript formats', () => {
  for (const [name, text] of Object.entries(TRANSCRIPTS)) {
    it(`reads ${name} as ${FORMAT_OF[name]} and cuts one chunk per exchange`, () => {
      const parsed = parseTranscript(text);
      expect(parsed?.format).toBe(FORMAT_OF[name]);
      const chunks = exchangeChunks(parsed!);
      expect(chunks).toHaveLength(2);
      expect(chunks[0]?.text).toContain(`> ${name.startsWith('slack') ? 'U1: ' : ''}${Q1}`);
      expect(chunks[0]?.text).toContain(A1);
      expect(chunks[0]?.text).not.toContain(Q2);
      expect(chunks[1]?.text).toContain(Q2);
      expect(chunks[1]?.text).toContain(A2);
      expect(chunks.map((c) => c.index)).toEqual([0, 1]);
      expect(chunks[1]!.start).toBeGreaterThan(chunks[0]!.start);
    });
  }

  it('keeps the Claude Code tool result with the assistant turn, and drops Codex environment context', () => {
    const cc = exchangeChunks(parseTranscript(TRANSCRIPTS['claude-code/session.jsonl']!)!);
    expect(cc[0]?.text).toContain('[tool Read:');
    expect(cc[0]?.text).toContain('[tool result: file body]');
    const codex = exchangeChunks(parseTranscript(TRANSCRIPTS['codex/rollout-2026-01-01.jsonl']!)!);
    expect(codex.map((c) => c.text).join('\n')).not.toContain('environment_context');
  });

  it('marks Slack speaker roles as positional and unverified', () => {
    const chunks = exchangeChunks(parseTranscript(TRANSCRIPTS['slack/general/2026-01-01.json']!)!);
    expect(chunks[0]?.text).toContain('speaker roles are positional, not verified');
  });

  it('is not fooled by JSON that is no conversation, nor text without > turns', async () => {
    expect(parseTranscript('{"name": "pkg", "version": "1.0.0"}')).toBeUndefined();
    expect(parseTranscript('just some notes\nwithout turns')).toBeUndefined();
    expect(await chunksFor('convos', '/r', '/r/package.json', '{"name": "pkg"}')).toBeUndefined();
  });
});

describe('documents and project files', () => {
  it('turns HTML into its visible text with headings and decoded entities', () => {
    const text = htmlToText(
      '<html><head><title>Ops guide</title><style>p{}</style></head><body><h1>Ops guide</h1><p>Restart the hub &amp; check <b>/healthz</b>.</p><script>alert(1)</script><ul><li>one</li><li>two</li></ul></body></html>',
    );
    expect(text).toBe('# Ops guide\n\nRestart the hub & check /healthz.\n\n- one\n- two');
  });

  it('lists text and code files, skipping ignored, skip-listed, binary-named and lock files', () => {
    tmp = makeTmpDir('palace-walk-');
    writeTree(tmp.path, { ...REPO, 'package-lock.json': '{}', 'sub/.gitignore': 'local.md\n', 'sub/local.md': 'x', 'sub/kept.md': 'y' });
    const files = listFiles(tmp.path, { extensions: PROJECT_EXTENSIONS, gitignore: true }).map((f) => relative(tmp!.path, f));
    expect(files).toEqual(['README.md', 'docs/design.md', 'empty.txt', 'src/lease.ts', 'src/server.ts', 'sub/kept.md']);
    const all = listFiles(tmp.path, { extensions: PROJECT_EXTENSIONS, gitignore: false }).map((f) => relative(tmp!.path, f));
    expect(all).toContain('secrets/keys.txt');
    expect(all).not.toContain('node_modules/dep/index.js');
  });

  it('chunks project files deterministically with line positions', async () => {
    const text = REPO['src/lease.ts']!;
    const a = await chunksFor('projects', '/r', '/r/src/lease.ts', text);
    const b = await chunksFor('projects', '/r', '/r/src/lease.ts', text);
    expect(a).toEqual(b);
    expect(a?.room).toBe('src');
    expect(a!.chunks.length).toBeGreaterThan(1);
    expect(a!.chunks[0]?.metadata).toMatchObject({ line_start: 1 });
    const second = a!.chunks[1]!;
    expect(second.metadata?.line_start).toBe(text.slice(0, second.start).split('\n').length);
  });
});

describe('source adapters', () => {
  it('raises two distinct errors: unknown name, unsupported runner semantics', () => {
    expect(resolveAdapter('claude-code').mode).toBe('convos');
    const unknown = (() => {
      try {
        resolveAdapter('nope');
      } catch (err) {
        return err as HubError;
      }
      return undefined;
    })();
    expect(unknown?.code).toBe('mine.unknown_adapter');
    const unsupported = (() => {
      try {
        resolveAdapter('slack-live');
      } catch (err) {
        return err as HubError;
      }
      return undefined;
    })();
    expect(unsupported?.code).toBe('mine.unsupported_adapter');
    expect(unsupported?.message).toContain("'poll' runner");
  });
});

describe('split', () => {
  it('splits a concatenated JSONL transcript by session and keeps the original as a backup', () => {
    tmp = makeTmpDir('palace-split-');
    const one = TRANSCRIPTS['claude-code/session.jsonl']!;
    writeTree(tmp.path, { 'mega.jsonl': one + one.replaceAll('"s1"', '"s2"'), 'single.jsonl': one });
    const dry = splitTranscripts(tmp.path, { minSessions: 2, dryRun: true });
    expect(dry.files.map((f) => f.sessions.length)).toEqual([2]);
    expect(existsSync(join(tmp.path, 'mega.session-001.jsonl'))).toBe(false);
    const done = splitTranscripts(tmp.path, { minSessions: 2, dryRun: false });
    expect(done.files[0]?.backup).toBe(join(tmp.path, 'mega.jsonl.mega_backup'));
    expect(readFileSync(join(tmp.path, 'mega.session-001.jsonl'), 'utf8')).toBe(one);
    expect(readFileSync(join(tmp.path, 'mega.session-002.jsonl'), 'utf8')).toContain('"s2"');
    expect(existsSync(join(tmp.path, 'single.jsonl'))).toBe(true);
  });
});
