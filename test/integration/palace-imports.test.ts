// What opening a palace loads: the composition root (hub/src/palace.ts), which every CLI call with
// no hub goes through, never loads peer sync's wire protocol (its zod schemas) or HTTP transport;
// memory replication reads peers.json and stamps the protocol version without them. A real node
// process on the built dist/, with a module resolve hook listing every module it loads.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { afterAll, describe, expect, it } from 'vitest';

const DIST = join(process.cwd(), 'dist', 'hub', 'src');
const dir = mkdtempSync(join(tmpdir(), 'palace-imports-'));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The dist/ modules a fresh node process loads to import `module` (paths relative to dist/hub/src). */
function loadedBy(module: string): string[] {
  const hooks = join(dir, 'hooks.mjs');
  writeFileSync(
    hooks,
    `export async function resolve(specifier, context, next) {\n  const r = await next(specifier, context);\n  process.stderr.write('LOADED ' + r.url + '\\n');\n  return r;\n}\n`,
  );
  const register = join(dir, 'register.mjs');
  writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
  const r = spawnSync(process.execPath, ['--import', pathToFileURL(register).href, '--input-type=module', '-e', `await import(${JSON.stringify(pathToFileURL(join(DIST, module)).href)});`], {
    encoding: 'utf8',
  });
  expect(r.status, r.stderr).toBe(0);
  const prefix = pathToFileURL(DIST).href + '/';
  return r.stderr
    .split('\n')
    .filter((l) => l.startsWith(`LOADED ${prefix}`))
    .map((l) => l.slice(`LOADED ${prefix}`.length));
}

describe('opening a palace loads no peer-sync protocol', () => {
  it('palace.js loads memory-sync and the peers file, not sync/protocol, the HTTP peer transport or the artifact stream', () => {
    const loaded = loadedBy('palace.js');
    expect(loaded).toContain('sync/memory-sync.js');
    expect(loaded).toContain('sync/peers-file.js');
    expect(loaded).not.toContain('sync/protocol.js');
    expect(loaded).not.toContain('sync/http-peer-transport.js');
    expect(loaded).not.toContain('sync/artifact-stream.js');
  });

  it('the hub side still has them (the check above is not blind)', () => {
    const loaded = loadedBy('sync/sync-service.js');
    expect(loaded).toContain('sync/protocol.js');
    expect(loaded).toContain('sync/http-peer-transport.js');
  });
});
