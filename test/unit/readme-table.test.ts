// The README benchmark table is generated from BENCHMARKS.md: only figures with a target, from every
// suite section, and nothing outside the README's markers changes.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { sectionBlock } from '../../bench/benchmarks-file.js';
import type { Figure } from '../../bench/figure.js';
import { markdownTable } from '../../bench/format.js';
import { insertTargetsTable, readmeRows, writeReadmeTable } from '../../bench/readme-table.js';

const figures: Figure[] = [
  {
    name: 'append p50',
    value: 1.5,
    unit: 'ms',
    reference: { value: 0.5, label: 'bare | POST', measured: true },
    target: { op: '<=', value: 3 },
  },
  { name: 'context only', value: 2, unit: 'ms', reference: { value: 1, label: 'bare', measured: true } },
  { name: 'throughput', value: 100, unit: 'events/s', target: { op: '>=', value: 200, note: 'ours' } },
];

function benchmarks(): string {
  return [
    '# Benchmarks',
    sectionBlock('logstream', `## logstream\n\n${markdownTable(figures.slice(2), [])}`),
    sectionBlock('hub', `## hub\n\n${markdownTable(figures.slice(0, 2), ['a note'])}`),
  ].join('\n\n');
}

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('README benchmark table', () => {
  it('lists every figure with a target, suite by suite, with its verdict', () => {
    expect(readmeRows(benchmarks())).toEqual([
      '| logstream: throughput | 100 events/s | - | ≥ 200 events/s* ✗ |',
      '| hub: append p50 | 1.50 ms | 0.500 ms (bare \\| POST) | ≤ 3.00 ms ✓ |',
    ]);
  });

  it('replaces only the block between the markers', () => {
    dir = mkdtempSync(join(tmpdir(), 'palace-readme-'));
    const readme = join(dir, 'README.md');
    const bench = join(dir, 'BENCHMARKS.md');
    writeFileSync(bench, benchmarks());
    writeFileSync(readme, 'before\n<!-- bench-table -->\nold\n<!-- /bench-table -->\nafter\n');
    expect(writeReadmeTable(readme, bench)).toBe(true);
    const text = readFileSync(readme, 'utf8');
    expect(text.startsWith('before\n<!-- bench-table -->\n| figure | measured | reference | target |')).toBe(
      true,
    );
    expect(text.endsWith('<!-- /bench-table -->\nafter\n')).toBe(true);
    expect(text).not.toContain('old');
    expect(text).toContain('| hub: append p50 |');
  });

  it('leaves a README without markers alone', () => {
    dir = mkdtempSync(join(tmpdir(), 'palace-readme-'));
    const readme = join(dir, 'README.md');
    const bench = join(dir, 'BENCHMARKS.md');
    writeFileSync(bench, benchmarks());
    writeFileSync(readme, 'no markers\n');
    expect(writeReadmeTable(readme, bench)).toBe(false);
    expect(readFileSync(readme, 'utf8')).toBe('no markers\n');
  });
});

describe('targets table at the top of BENCHMARKS.md (issue 31: it left the README)', () => {
  it('goes right after the machine block, once, however often it is written', () => {
    dir = mkdtempSync(join(tmpdir(), 'palace-readme-'));
    const bench = join(dir, 'BENCHMARKS.md');
    const machine = '<!-- bench:machine -->\n## Machine\n<!-- /bench:machine -->';
    writeFileSync(bench, `# Benchmarks\n\n${machine}\n\n${benchmarks().replace('# Benchmarks\n\n', '')}\n`);
    expect(insertTargetsTable(bench)).toBe(true);
    const once = readFileSync(bench, 'utf8');
    expect(once).toContain(`${machine}\n\n## Targets at a glance\n\n<!-- bench-table -->\n| figure |`);
    expect(once).toContain('| hub: append p50 |');
    expect(insertTargetsTable(bench)).toBe(true);
    expect(readFileSync(bench, 'utf8')).toBe(once);
    expect(once.match(/<!-- bench-table -->/g)).toHaveLength(1);
  });
});
