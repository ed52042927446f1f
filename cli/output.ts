// Owns what the CLI writes: results to stdout (text or --json), diagnostics and warnings to stderr,
// and the mapping from errors to exit codes (0 ok, 1 error, 2 unusable argument or timeout).

import { exitCodeFor, toHubError } from '../hub/src/errors.js';

export const EXIT = { ok: 0, error: 1, usage: 2, timeout: 2, interrupted: 130 } as const;

/** Thrown to end a command with a specific exit code after its output is written. */
export class ExitSignal extends Error {
  constructor(readonly exitCode: number) {
    super(`exit ${exitCode}`);
  }
}

export interface Output {
  json: boolean;
  /** A result: JSON (pretty) with --json, else the given text lines. */
  result(value: unknown, text: () => string): void;
  /** One line of NDJSON or text (for --follow streams). */
  line(text: string): void;
  /** Raw bytes to stdout, untouched. */
  bytes(data: Uint8Array): void;
  /** A diagnostic to stderr. */
  note(text: string): void;
  warn(text: string): void;
}

export function makeOutput(json: boolean): Output {
  return {
    json,
    result(value, text) {
      process.stdout.write(json ? JSON.stringify(value, null, 2) + '\n' : text() + '\n');
    },
    line(text) {
      process.stdout.write(text + '\n');
    },
    bytes(data) {
      process.stdout.write(data);
    },
    note(text) {
      process.stderr.write(text + '\n');
    },
    warn(text) {
      process.stderr.write(`Warning: ${text}\n`);
    },
  };
}

/** Reports an error the way the command's mode asks for, and returns the exit code. */
export function reportError(err: unknown, json: boolean): number {
  if (err instanceof ExitSignal) return err.exitCode;
  const hubError = toHubError(err);
  if (json) process.stdout.write(JSON.stringify({ error: hubError.toJSON() }, null, 2) + '\n');
  else process.stderr.write(`Error: ${hubError.message}\n`);
  if (hubError.code === 'internal' && hubError.cause instanceof Error && !json)
    process.stderr.write(`${hubError.cause.stack ?? ''}\n`);
  return exitCodeFor(hubError.code);
}
