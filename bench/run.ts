// Entry of `npm run bench [-- suite ...]`: runs the named suites (default: all registered), prints
// one result line per figure on stdout (progress on stderr), updates BENCHMARKS.md and its targets table.

import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';

import { describeMachine, machineLine, sectionBlock, writeBenchmarks } from './benchmarks-file.js';
import type { Suite } from './figure.js';
import { markdownTable, resultLines, targetSummary } from './format.js';
import { insertTargetsTable } from './readme-table.js';
import { SUITES, findSuite } from './suites.js';

const BENCHMARKS_MD = fileURLToPath(new URL('../../BENCHMARKS.md', import.meta.url));

function progress(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

function selectSuites(args: readonly string[]): Suite[] | undefined {
  const names = args.filter((a) => !a.startsWith('-'));
  if (names.length === 0) return [...SUITES];
  const unknown = names.filter((n) => !findSuite(n));
  if (unknown.length > 0) {
    progress(`unknown suite(s): ${unknown.join(', ')}; available: ${SUITES.map((s) => s.name).join(', ')}`);
    return undefined;
  }
  return [...new Set(names)].map((n) => findSuite(n)).filter((s): s is Suite => s !== undefined);
}

async function main(args: readonly string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(
      `usage: npm run bench [-- suite ...]\nsuites: ${SUITES.map((s) => s.name).join(', ')}\n`,
    );
    return 0;
  }
  const suites = selectSuites(args);
  if (!suites) return 2;
  const machine = describeMachine();
  progress(`machine: ${machineLine(machine)}`);
  const sections = new Map<string, string>();
  let failed = false;
  for (const suite of suites) {
    const loadBefore = loadavg()[0] ?? 0;
    if (loadBefore > cpus().length / 2)
      progress(
        `load average ${loadBefore.toFixed(2)} on ${cpus().length} cores: other work is running; figures will be noisy`,
      );
    progress(`suite ${suite.name}: start`);
    const started = performance.now();
    try {
      const result = await suite.run({ progress: (m) => progress(`${suite.name}: ${m}`) });
      for (const line of resultLines(suite.name, result.figures)) process.stdout.write(`${line}\n`);
      const { met, total } = targetSummary(result.figures);
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      const load = `load average (1 min) ${loadBefore.toFixed(2)} at start, ${(loadavg()[0] ?? 0).toFixed(2)} at end`;
      progress(`suite ${suite.name}: ${met}/${total} targets met, ${seconds} s`);
      if (result.smoke) {
        progress(`suite ${suite.name}: smoke run (${result.smoke}); figures not written to BENCHMARKS.md`);
        continue;
      }
      const body = [
        `## ${suite.name}: ${suite.title}`,
        '',
        `Run ${machine.date} on ${machineLine(machine)}; ${load}; ${met}/${total} targets met; took ${seconds} s.`,
        '',
        markdownTable(result.figures, result.notes),
      ].join('\n');
      sections.set(suite.name, sectionBlock(suite.name, body));
    } catch (err) {
      failed = true;
      progress(`suite ${suite.name} failed: ${(err as Error).stack ?? String(err)}`);
    }
  }
  if (sections.size > 0) {
    writeBenchmarks(
      BENCHMARKS_MD,
      machine,
      sections,
      SUITES.map((s) => s.name),
    );
    progress(`wrote ${BENCHMARKS_MD}`);
    if (insertTargetsTable(BENCHMARKS_MD)) progress(`wrote the targets table at the top of ${BENCHMARKS_MD}`);
  }
  return failed ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));
