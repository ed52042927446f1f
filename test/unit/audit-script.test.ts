// scripts/audit.mjs on saved `npm audit --json` reports: a clean report passes, an advisory fails
// unless allowlisted (and not expired), and an unusable audit endpoint warns but passes (--strict fails).

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterEach, describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('../../scripts/audit.mjs', import.meta.url));
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const VULNERABLE = {
  auditReportVersion: 2,
  vulnerabilities: {
    'left-pad': {
      name: 'left-pad',
      severity: 'high',
      via: [
        {
          source: 1096460,
          name: 'left-pad',
          title: 'Prototype pollution',
          url: 'https://github.com/advisories/GHSA-aaaa-bbbb-cccc',
          severity: 'high',
          range: '<1.3.1',
        },
      ],
    },
    koa: { name: 'koa', severity: 'high', via: ['left-pad'] },
  },
  metadata: { vulnerabilities: { total: 2 } },
};

function audit(
  report: unknown,
  advisories: unknown[],
  extra: string[] = [],
): { code: number | null; stderr: string } {
  const dir = mkdtempSync(join(tmpdir(), 'palace-audit-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'report.json'), JSON.stringify(report));
  writeFileSync(join(dir, 'allow.json'), JSON.stringify({ advisories }));
  const run = spawnSync(
    process.execPath,
    [SCRIPT, '--from-file', join(dir, 'report.json'), '--allowlist', join(dir, 'allow.json'), ...extra],
    { encoding: 'utf8' },
  );
  return { code: run.status, stderr: run.stderr };
}

describe('scripts/audit.mjs', () => {
  it('passes a clean report', () => {
    expect(
      audit({ auditReportVersion: 2, vulnerabilities: {}, metadata: { vulnerabilities: { total: 0 } } }, [])
        .code,
    ).toBe(0);
  });

  it('fails on an advisory that is not allowlisted, naming it', () => {
    const run = audit(VULNERABLE, []);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('ADVISORY GHSA-aaaa-bbbb-cccc in left-pad (high)');
  });

  it('allows an allowlisted advisory and says why; an expired allowance fails again', () => {
    const entry = {
      id: 'GHSA-aaaa-bbbb-cccc',
      package: 'left-pad',
      reason: 'only reachable from a code path palace never calls',
    };
    const ok = audit(VULNERABLE, [entry]);
    expect(ok.code).toBe(0);
    expect(ok.stderr).toContain('allowed GHSA-aaaa-bbbb-cccc (left-pad, high): only reachable');
    expect(audit(VULNERABLE, [{ ...entry, expires: '2000-01-01' }]).code).toBe(1);
  });

  it('refuses an allowlist entry without a reason', () => {
    expect(audit(VULNERABLE, [{ id: 'GHSA-aaaa-bbbb-cccc', package: 'left-pad' }]).code).toBe(2);
  });

  it('warns but passes when the endpoint cannot be used; --strict fails', () => {
    const unreachable = {
      message: '405 Method Not Allowed - POST https://registry.npmjs.org/-/npm/v1/security/advisories/bulk',
      statusCode: 405,
    };
    const run = audit(unreachable, []);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/WARNING: the audit endpoint could not be used: 405/);
    expect(audit(unreachable, [], ['--strict']).code).toBe(1);
  });
});
