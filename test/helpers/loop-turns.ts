// Counts turns of the event loop (a setImmediate probe that re-arms itself) while code under test runs:
// work that hands the loop back lets turns through; one synchronous run lets none.

export interface LoopTurns {
  /** Turns counted since the probe started or was last reset. */
  readonly count: number;
  /** Starts counting again from 0 (e.g. once the rows a build indexes have been handed over). */
  reset(): void;
  /** Stops the probe; `count` stays as it was. */
  stop(): number;
}

export function countLoopTurns(): LoopTurns {
  let turns = 0;
  let probing = true;
  const probe = (): void => {
    turns++;
    if (probing) setImmediate(probe);
  };
  setImmediate(probe);
  return {
    get count() {
      return turns;
    },
    reset() {
      turns = 0;
    },
    stop() {
      probing = false;
      return turns;
    },
  };
}
