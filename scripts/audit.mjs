#!/usr/bin/env node
// `npm audit --omit=dev` with a documented allowlist (audit-allowlist.json: one entry per advisory
// with the package and the reason it is accepted). Fails on any advisory not allowlisted (or whose
// allowance expired); prints what it allowed. An unreachable or unsupported audit endpoint is a loud
// warning and exit 0, because it says nothing about our dependencies; --strict makes it fail too.
// Usage: node scripts/audit.mjs [--strict] [--from-file report.json] [--allowlist path]
/* global URL, process */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const option = (name) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
const strict = args.includes('--strict') || process.env.PALACE_AUDIT_STRICT === '1';
const allowlistPath = option('--allowlist') ?? `${root}/audit-allowlist.json`;

function say(line) {
  process.stderr.write(`[audit] ${line}\n`);
}

/** The audit report: from a file (tests, offline review) or from `npm audit --omit=dev --json`. */
function readReport() {
  const file = option('--from-file');
  if (file) return { text: readFileSync(file, 'utf8'), stderr: '' };
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const run = spawnSync(npm, ['audit', '--omit=dev', '--json'], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return { text: run.stdout ?? '', stderr: run.stderr ?? '' };
}

/** Every advisory in an npm 7+ audit report: id (GHSA id, or the registry's numeric source), package, severity, title. */
function advisories(report) {
  const found = new Map();
  for (const vuln of Object.values(report.vulnerabilities ?? {})) {
    for (const via of vuln.via ?? []) {
      if (typeof via !== 'object' || via === null) continue; // a string names another vulnerable package
      const ghsa = /GHSA-[\w-]+/.exec(via.url ?? '')?.[0];
      const id = ghsa ?? String(via.source);
      if (!found.has(id))
        found.set(id, {
          id,
          source: String(via.source),
          package: via.name ?? vuln.name,
          severity: via.severity ?? vuln.severity,
          title: via.title ?? '',
          url: via.url ?? '',
        });
    }
  }
  return [...found.values()];
}

function loadAllowlist() {
  const parsed = JSON.parse(readFileSync(allowlistPath, 'utf8'));
  const entries = parsed.advisories ?? [];
  for (const e of entries)
    if (!e.id || !e.package || !e.reason)
      throw new Error(
        `${allowlistPath}: every entry needs id, package and reason (got ${JSON.stringify(e)})`,
      );
  return entries;
}

function main() {
  const allowlist = loadAllowlist();
  const { text, stderr } = readReport();
  let report;
  try {
    report = JSON.parse(text);
  } catch {
    report = undefined;
  }
  if (!report || report.vulnerabilities === undefined) {
    const why =
      report?.message ?? report?.error?.summary ?? (stderr.trim().split('\n').pop() || 'no JSON report');
    say(`WARNING: the audit endpoint could not be used: ${why}`);
    say(
      'WARNING: no advisories were checked; run `npm audit --omit=dev` where registry.npmjs.org is reachable',
    );
    return strict ? 1 : 0;
  }
  const today = new Date().toISOString().slice(0, 10);
  const allowed = [];
  const refused = [];
  for (const adv of advisories(report)) {
    const entry = allowlist.find(
      (e) => (e.id === adv.id || e.id === adv.source) && e.package === adv.package,
    );
    if (entry && (!entry.expires || entry.expires >= today)) allowed.push({ adv, entry });
    else refused.push({ adv, expired: entry?.expires });
  }
  for (const { adv, entry } of allowed)
    say(`allowed ${adv.id} (${adv.package}, ${adv.severity}): ${entry.reason}`);
  const used = new Set(allowed.map((a) => a.entry));
  for (const e of allowlist)
    if (!used.has(e)) say(`note: allowlist entry ${e.id} (${e.package}) matched nothing; remove it`);
  for (const { adv, expired } of refused)
    say(
      `ADVISORY ${adv.id} in ${adv.package} (${adv.severity}): ${adv.title} ${adv.url}${expired ? ` [allowance expired ${expired}]` : ''}`,
    );
  const total = report.metadata?.vulnerabilities?.total ?? 0;
  say(
    `${total} vulnerable package(s) in production dependencies; ${allowed.length} advisory(ies) allowed, ${refused.length} not allowed`,
  );
  return refused.length > 0 ? 1 : 0;
}

try {
  process.exit(main());
} catch (err) {
  say(`failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(2);
}
