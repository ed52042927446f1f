// The meta-table marker of a projection built in slices (tasks, reservations): present, holding the seq
// the background build has reached, until the projection is complete; then removed.

import type Database from 'better-sqlite3';

import { statementCache, type StatementCache } from '../sqlite-statements.js';

export class BuildMarker {
  private readonly stmt: StatementCache;

  /** `key`: the projection's meta key (schema migrations insert it at '0' when they create the table). */
  constructor(
    private readonly db: Database.Database,
    private readonly key: string,
  ) {
    this.stmt = statementCache(db);
  }

  /** The seq the build has reached, or null when the projection is complete. */
  seq(): number | null {
    const v = this.stmt('SELECT value FROM meta WHERE key = ?').pluck().get(this.key) as string | undefined;
    return v === undefined ? null : Number(v);
  }

  /**
   * One slice of the build, in one immediate transaction: `step(from)` applies what follows seq `from`
   * and returns the seq it reached, or null when it reached the end. True when the projection is complete.
   */
  buildSlice(step: (from: number) => number | null): boolean {
    return this.db
      .transaction((): boolean => {
        const from = this.seq();
        if (from === null) return true;
        const reached = step(from);
        if (reached === null) {
          this.stmt('DELETE FROM meta WHERE key = ?').run(this.key);
          return true;
        }
        this.stmt('UPDATE meta SET value = ? WHERE key = ?').run(String(reached), this.key);
        return false;
      })
      .immediate();
  }

  /** Marks the projection unbuilt from the first event; runs inside the caller's transaction. */
  restart(): void {
    this.stmt(`INSERT INTO meta (key, value) VALUES (?, '0') ON CONFLICT(key) DO UPDATE SET value = '0'`).run(this.key);
  }
}
