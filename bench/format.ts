// Renders figures: one aligned result line each for stdout, and a Markdown table per suite for
// BENCHMARKS.md. Pure string functions.

import { meetsTarget, ratioOf, type Figure, type Reference, type Target } from './figure.js';

export function formatValue(value: number, unit: string): string {
  if (!Number.isFinite(value)) return `n/a ${unit}`;
  if (unit === 'x') return `${value.toFixed(2)}x`;
  if (unit === 'fraction') return value.toFixed(3);
  if (unit === 'KB') return `${value.toFixed(2)} KB`;
  if (unit === 'ms') {
    const digits = value < 1 ? 3 : value < 10 ? 2 : value < 100 ? 1 : 0;
    return `${value.toFixed(digits)} ms`;
  }
  return `${Math.round(value).toLocaleString('en-US')} ${unit}`;
}

function referenceValue(ref: Reference, unit: string): string {
  return ref.text ?? formatValue(ref.value, unit);
}

function ratioText(figure: Figure): string {
  const ratio = ratioOf(figure);
  if (ratio === undefined) return '-';
  const text = ratio < 0.01 ? ratio.toPrecision(2) : ratio.toFixed(2);
  const ref = figure.reference;
  return ref?.text ? `${text} (vs ${formatValue(ref.value, figure.unit)})` : text;
}

function targetText(target: Target | undefined, unit: string): string {
  if (!target) return '-';
  return `${target.op === '>=' ? '≥' : '≤'} ${formatValue(target.value, unit)}${target.note ? '*' : ''}`;
}

function marker(figure: Figure): string {
  const met = meetsTarget(figure);
  return met === undefined ? '' : met ? '✓ pass' : '✗ FAIL';
}

/** Aligned stdout lines, one per figure. */
export function resultLines(suite: string, figures: readonly Figure[]): string[] {
  const rows = figures.map((f) => [
    `${suite}  ${f.name}`,
    formatValue(f.value, f.unit),
    f.reference ? `ref ${referenceValue(f.reference, f.unit)} [${f.reference.label}]` : 'ref -',
    `ratio ${ratioText(f)}`,
    `target ${targetText(f.target, f.unit)} ${marker(f)}`.trimEnd(),
  ]);
  const widths = [0, 1, 2, 3].map((c) => Math.max(...rows.map((r) => r[c]?.length ?? 0)));
  return rows.map((r) =>
    r.map((cell, c) => (c === 1 ? cell.padStart(widths[c] ?? 0) : cell.padEnd(widths[c] ?? 0))).join('  '),
  );
}

function cell(text: string): string {
  return text.replaceAll('|', '\\|');
}

/** The Markdown table of one suite, then its notes as bullets. */
export function markdownTable(figures: readonly Figure[], notes: readonly string[]): string {
  const lines = [
    '| figure | measured | reference (same run) | ratio | target |',
    '| --- | ---: | --- | ---: | --- |',
    ...figures.map((f) => {
      const ref = f.reference
        ? `${referenceValue(f.reference, f.unit)} (${f.reference.measured ? '' : '**static:** '}${f.reference.label})`
        : '-';
      const target = f.target ? `${targetText(f.target, f.unit)} ${marker(f)}` : '-';
      return `| ${cell(f.name)} | ${formatValue(f.value, f.unit)} | ${cell(ref)} | ${ratioText(f)} | ${target} |`;
    }),
  ];
  const targetNotes = [...new Set(figures.flatMap((f) => (f.target?.note ? [f.target.note] : [])))];
  const bullets = [
    'Ratio = measured / reference; for a static reference range, against its best (lowest) end.',
    ...targetNotes.map((n) => `\\* Target: ${n}.`),
    ...notes,
  ];
  return [...lines, '', ...bullets.map((b) => `- ${b}`)].join('\n');
}

/** "met/total" over the figures that have a target. */
export function targetSummary(figures: readonly Figure[]): { met: number; total: number } {
  const verdicts = figures.map(meetsTarget).filter((v) => v !== undefined);
  return { met: verdicts.filter(Boolean).length, total: verdicts.length };
}
