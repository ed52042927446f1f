// Several processes opening a fresh palace at once (CLI writers with no hub) all mint-or-read the hub's
// signing key. The loser of the exclusive create must never read a key file the winner is still
// writing: every process gets the same, whole key. (Found in CI: one of 4 concurrent `logstream append`
// processes failed with "cannot open the logstream …: DECODER routines::unsupported".)

import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

import { makeTmpDir, type TmpDir } from '../helpers/tmp-dir.js';

const MODULE = pathToFileURL(join(process.cwd(), 'dist/hub/src/logstream/signing-key.js')).href;
const PROCESSES = 6;
const ROUNDS = 15;

/** One child: waits for the go time, then loads (or mints) the key and prints its public half. */
function loadInChild(path: string, at: number): Promise<{ code: number | null; out: string; err: string }> {
  const script = `
    const { loadSigningKey } = await import(${JSON.stringify(MODULE)});
    while (Date.now() < ${at}) {}
    try { process.stdout.write(loadSigningKey(${JSON.stringify(path)}, true).publicRaw); }
    catch (e) { process.stderr.write(String(e && e.message)); process.exit(1); }`;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

describe('the signing key of a fresh palace, opened by several processes at once', () => {
  let dir: TmpDir;
  afterAll(() => dir?.cleanup());

  it('gives every process the same whole key, and leaves no temporary file', { timeout: 120_000 }, async () => {
    dir = makeTmpDir('palace-key-race-');
    for (let round = 0; round < ROUNDS; round++) {
      const path = join(dir.path, `r${round}`, 'logstream.key');
      mkdirSync(join(dir.path, `r${round}`));
      const at = Date.now() + 400; // every child spins until then, so they race on the create
      const results = await Promise.all(Array.from({ length: PROCESSES }, () => loadInChild(path, at)));
      for (const r of results) expect(r.code, `round ${round}: ${r.err}`).toBe(0);
      expect(new Set(results.map((r) => r.out)).size, `round ${round}`).toBe(1);
      expect(readdirSync(join(dir.path, `r${round}`))).toEqual(['logstream.key']);
    }
  });
});
