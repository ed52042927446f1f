// The shapes every benchmark suite returns: figures with their reference and target, and the
// suite contract the runner drives. No measuring and no output here.

/** What a figure is compared with: measured in the same run, or quoted (e.g. from DESIGN.md). */
export interface Reference {
  /** In the figure's unit; the ratio is figure / reference. */
  value: number;
  /** What the reference is, e.g. "bare better-sqlite3 INSERT, plain table". */
  label: string;
  /** False for static figures that cannot be measured here (they are labelled as such). */
  measured: boolean;
  /** Display text overriding the formatted value, e.g. a range "127-158 ms". */
  text?: string;
}

/** A target from DESIGN.md "Performance". */
export interface Target {
  op: '>=' | '<=';
  value: number;
  /** Where the target comes from when it is our reading rather than a number in DESIGN.md. */
  note?: string;
}

export interface Figure {
  name: string;
  value: number;
  /** "events/s", "ms" or "x" (a ratio). */
  unit: string;
  reference?: Reference;
  target?: Target;
}

export interface SuiteResult {
  figures: Figure[];
  /** Context printed under the suite's table (sizes, modes, static comparisons). */
  notes: string[];
  /** Set when the run was shrunk to smoke-test the suite: its figures are printed, not recorded. */
  smoke?: string;
}

export interface SuiteContext {
  /** A progress line on stderr. */
  progress(message: string): void;
}

export interface Suite {
  name: string;
  title: string;
  run(ctx: SuiteContext): Promise<SuiteResult>;
}

export function meetsTarget(figure: Figure): boolean | undefined {
  const t = figure.target;
  if (!t) return undefined;
  return t.op === '>=' ? figure.value >= t.value : figure.value <= t.value;
}

export function ratioOf(figure: Figure): number | undefined {
  const ref = figure.reference;
  if (!ref || ref.value === 0 || !Number.isFinite(ref.value)) return undefined;
  return figure.value / ref.value;
}
