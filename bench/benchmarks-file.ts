// Owns BENCHMARKS.md: the machine block and one section per suite between marker comments.
// Rewrites the machine block and the sections of the suites that ran; keeps every other section.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';

export interface Machine {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  node: string;
  date: string;
}

export function describeMachine(now = new Date()): Machine {
  const list = cpus();
  return {
    cpuModel: list[0]?.model.trim() ?? 'unknown CPU',
    cores: list.length,
    memoryGiB: totalmem() / 1024 ** 3,
    node: process.version,
    date: now.toISOString().replace(/\.\d+Z$/, 'Z'),
  };
}

export function machineLine(m: Machine): string {
  return `${m.cores} cores, ${m.cpuModel}, ${m.memoryGiB.toFixed(1)} GiB, Node ${m.node}`;
}

const HEADER = [
  '# Benchmarks',
  '',
  'Written by `npm run bench` (`bench/run.ts`); `npm run bench -- <suite>` reruns one suite and replaces only its',
  'section. Each reference is measured in the same run unless marked **static**. Targets are from',
  '`DESIGN.md` "Performance". Do not edit by hand.',
].join('\n');

const MACHINE_START = '<!-- bench:machine -->';
const MACHINE_END = '<!-- /bench:machine -->';
const SECTION = /<!-- bench:suite ([\w-]+) -->\n[\s\S]*?<!-- \/bench:suite \1 -->/g;

function machineBlock(m: Machine): string {
  return [
    MACHINE_START,
    '## Machine (latest run)',
    '',
    `- CPU: ${m.cpuModel} (${m.cores} cores)`,
    `- Memory: ${m.memoryGiB.toFixed(1)} GiB`,
    `- Node: ${m.node}`,
    `- Date: ${m.date}`,
    MACHINE_END,
  ].join('\n');
}

export function sectionBlock(name: string, body: string): string {
  return `<!-- bench:suite ${name} -->\n${body}\n<!-- /bench:suite ${name} -->`;
}

/** Existing suite sections by name, in file order. */
export function readSections(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const match of text.matchAll(SECTION)) if (match[1]) out.set(match[1], match[0]);
  return out;
}

/**
 * Writes BENCHMARKS.md with `fresh` sections (full blocks from sectionBlock) replacing same-named
 * ones; sections follow `order`, then any others the file already had.
 */
export function writeBenchmarks(
  path: string,
  machine: Machine,
  fresh: ReadonlyMap<string, string>,
  order: readonly string[],
): void {
  const sections = existsSync(path) ? readSections(readFileSync(path, 'utf8')) : new Map<string, string>();
  for (const [name, block] of fresh) sections.set(name, block);
  const names = [
    ...order.filter((n) => sections.has(n)),
    ...[...sections.keys()].filter((n) => !order.includes(n)),
  ];
  const blocks = [HEADER, machineBlock(machine), ...names.map((n) => sections.get(n) ?? '')];
  writeFileSync(path, `${blocks.join('\n\n')}\n`);
}
