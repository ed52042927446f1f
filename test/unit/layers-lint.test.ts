// The lint rules that keep layers pointing down fire on violating imports: eslint runs on
// temporary source text placed (virtually) in the layer it would break, and on the same text where it is allowed.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint({ cwd: process.cwd() });

async function messages(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'palace/layers' || m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('layer boundaries (palace/layers, no-restricted-imports)', () => {
  it('refuses an upward import in hub/src and accepts the same import one layer up', async () => {
    const up = "import type { HubServices } from '../services.js';\nexport type X = HubServices;\n";
    expect((await messages('hub/src/memory/zz-probe.ts', up)).join('\n')).toMatch(/hub\/src\/memory \(layer \d\) may not import hub\/src\/services/);
    expect(await messages('hub/src/mcp/zz-probe.ts', up)).toEqual([]);
  });

  it('refuses memory -> mine (the old why.ts cycle) and services -> http', async () => {
    expect((await messages('hub/src/memory/zz-probe.ts', "export { readManifest } from '../mine/manifest.js';\n")).join()).toMatch(/may not import hub\/src\/mine/);
    expect((await messages('hub/src/zz-probe.ts', "export { createApp } from './http/app.js';\n")).join()).toMatch(/has no layer|may not import hub\/src\/http/);
    expect((await messages('hub/src/services.ts', "export { createApp } from './http/app.js';\n")).join()).toMatch(/may not import hub\/src\/http/);
  });

  it('keeps the hub client browser-safe and the hub out of cli/', async () => {
    expect((await messages('hub/src/client/zz-probe.ts', "export { HubError } from '../errors.js';\n")).join()).toMatch(/imports only core/);
    expect((await messages('hub/src/mcp/zz-probe.ts', "export { action } from '../../../cli/context.js';\n")).join()).toMatch(/never imports from cli/);
  });

  it('lets the CLI import only its allowed hub modules (type-only imports are free)', async () => {
    const runtime = "export { Logstream } from '../../hub/src/logstream/logstream.js';\n";
    expect((await messages('cli/commands/zz-probe.ts', runtime)).join()).toMatch(/the CLI may not import hub\/src\/logstream/);
    expect(await messages('cli/commands/zz-probe.ts', "import type { Logstream } from '../../hub/src/logstream/logstream.js';\nexport type L = Logstream;\n")).toEqual([]);
    expect(await messages('cli/commands/zz-probe.ts', "export { HubError } from '../../hub/src/errors.js';\n")).toEqual([]);
  });

  it('allows better-sqlite3 only in the modules that own a SQLite file', async () => {
    const code = "import Database from 'better-sqlite3';\nexport const open = (p: string) => new Database(p);\n";
    expect((await messages('hub/src/mcp/zz-probe.ts', code)).join()).toMatch(/Only the modules that own a SQLite file/);
    expect((await messages('cli/commands/zz-probe.ts', code)).join()).toMatch(/Only the modules that own a SQLite file/);
    expect(await messages('hub/src/logstream/zz-probe.ts', code)).toEqual([]);
  });

  it('keeps the SQLite log below the services built on it, inside logstream/ (type imports included)', async () => {
    const up = "import type { Logstream } from './logstream.js';\nexport type L = Logstream;\n";
    expect((await messages('hub/src/logstream/store-core.ts', up)).join()).toMatch(/store-core\.ts \(level 0\) may not import logstream\/logstream\.ts/);
    expect((await messages('hub/src/logstream/task-projection.ts', "export { Coordination } from './coordination-service.js';\n")).join()).toMatch(/may not import logstream\/coordination-service/);
    expect(await messages('hub/src/logstream/lease-sweeper.ts', up)).toEqual([]);
    expect((await messages('hub/src/logstream/zz-probe.ts', up)).join()).toMatch(/zz-probe\.ts has no level/);
  });

  it('finds no violation in the tree as it stands', async () => {
    const results = await eslint.lintFiles(['hub/src', 'cli']);
    const found = results.flatMap((r) => r.messages.filter((m) => m.ruleId === 'palace/layers').map((m) => `${r.filePath}: ${m.message}`));
    expect(found).toEqual([]);
  });

  it('assembles HubServices in one place (palace.ts) and attaches nothing through WeakMap side tables', () => {
    const files = ['hub/src', 'cli'].flatMap((dir) =>
      readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts')).map((f) => join(dir, f)),
    );
    const builders = files.filter((f) => /:\s*HubServices\s*=\s*\{/.test(readFileSync(f, 'utf8')));
    expect(builders).toEqual(['hub/src/palace.ts']);
    expect(files.filter((f) => /new WeakMap\s*</.test(readFileSync(f, 'utf8')))).toEqual([]);
  });
});
