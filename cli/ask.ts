// The one y/N question the CLI asks on a terminal (written to stderr, so stdout stays the result).
// Callers decide first whether there is a terminal; without one they need an explicit flag instead.

import { createInterface } from 'node:readline/promises';

/** Asks `question [y/N]`; true only for y or yes. */
export async function askYesNo(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim());
  } finally {
    rl.close();
  }
}
