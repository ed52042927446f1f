// The deployment files parse, and name only flags `palace serve` has and variables palace reads.

import { readFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const root = new URL('../../', import.meta.url);
const read = (path: string): string => readFileSync(new URL(path, root), 'utf8');

/** Long flags `palace serve` declares (cli/commands/serve.ts is their one definition). */
function serveFlags(): Set<string> {
  return new Set([...read('cli/commands/serve.ts').matchAll(/\.option\('(--[a-z-]+)/g)].map((m) => m[1] ?? ''));
}

/** PALACE_* variables the configuration module reads. */
function knownVariables(): Set<string> {
  return new Set([...read('hub/src/config.ts').matchAll(/\b(PALACE_[A-Z_]+)\b/g)].map((m) => m[1] ?? ''));
}

function flagsIn(args: readonly string[]): string[] {
  return args.filter((a) => a.startsWith('--'));
}

function variablesIn(text: string): string[] {
  return [...new Set([...text.matchAll(/\b(PALACE_[A-Z_]+)\b/g)].map((m) => m[1] ?? ''))];
}

describe('deploy/compose.yaml', () => {
  const compose = parse(read('deploy/compose.yaml')) as {
    services: Record<string, { command?: string[]; environment?: Record<string, string>; healthcheck?: { test: string[] }; volumes?: string[] }>;
    volumes: Record<string, unknown>;
  };

  it('runs the hub beside Qdrant with persistent volumes', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['palace', 'qdrant']);
    expect(Object.keys(compose.volumes).sort()).toEqual(['palace-data', 'qdrant-data']);
    expect(compose.services.palace?.volumes).toContain('palace-data:/data');
    expect(compose.services.qdrant?.volumes).toContain('qdrant-data:/qdrant/storage');
  });

  it('checks health on /healthz', () => {
    expect(compose.services.palace?.healthcheck?.test.join(' ')).toContain('/healthz');
  });

  it('passes only real serve flags and takes the token from the environment file', () => {
    const command = compose.services.palace?.command ?? [];
    expect(command.slice(0, 3)).toEqual(['node', 'bin/palace.js', 'serve']);
    const known = serveFlags();
    for (const flag of flagsIn(command)) expect(known, flag).toContain(flag);
    expect(command).not.toContain('--token');
    expect(compose.services.palace?.environment?.PALACE_MCP_HTTP_TOKEN).toMatch(/^\$\{PALACE_MCP_HTTP_TOKEN/);
  });

  it('names only variables palace reads', () => {
    const known = knownVariables();
    for (const name of variablesIn(read('deploy/compose.yaml'))) expect(known, name).toContain(name);
  });
});

describe('deploy/palace.service', () => {
  const unit = read('deploy/palace.service');
  const entries = new Map<string, string>();
  for (const line of unit.split('\n')) {
    const m = /^([A-Za-z]+)=(.*)$/.exec(line.trim());
    if (m?.[1]) entries.set(m[1], m[2] ?? '');
  }

  it('is hardened and restarts on the clean idle exit', () => {
    expect(entries.get('NoNewPrivileges')).toBe('true');
    expect(entries.get('ProtectSystem')).toBe('strict');
    expect(entries.get('Restart')).toBe('always');
    expect(entries.get('ReadWritePaths')).toBe('/var/lib/palace');
    expect(entries.get('User')).toBe('palace');
    expect(entries.get('EnvironmentFile')).toBe('/etc/palace/palace.env');
  });

  it('starts `palace serve` with real flags and no token on the command line', () => {
    const exec = (entries.get('ExecStart') ?? '').split(/\s+/);
    expect(exec).toContain('serve');
    const known = serveFlags();
    for (const flag of flagsIn(exec)) expect(known, flag).toContain(flag);
    expect(exec).not.toContain('--token');
  });
});

describe('deploy/palace.env', () => {
  it('sets only variables palace reads, each documented in the environment reference', () => {
    const readme = read('docs/environment.md');
    const known = knownVariables();
    const names = read('deploy/palace.env')
      .split('\n')
      .filter((l) => /^[A-Z_]+=/.test(l))
      .map((l) => l.split('=')[0] ?? '');
    expect(names).toContain('PALACE_MCP_HTTP_TOKEN');
    for (const name of names) {
      expect(known, name).toContain(name);
      expect(readme, name).toContain(`\`${name}\``);
    }
  });
});
