// Owns what the CLI writes: results to stdout (text or --json), diagnostics and warnings to stderr,
// and the mapping from errors to exit codes (0 ok, 1 error, 2 unusable argument or timeout).

import { terminalText } from '../hub/src/core/terminal-text.js';
import { exitCodeFor, toHubError } from '../hub/src/errors.js';

/** The SGR codes the CLI itself colours with (search highlights); kept only in `styled` results. */
// eslint-disable-next-line no-control-regex
const OWN_SGR = /(\u001b\[(?:1;33|2|0)m)/;

/**
 * Text for a human's terminal: other agents' words can hold escape sequences, controls and line ends
 * of every kind (docs/security.md); all are made inert here, once, for every text-mode result.
 * `styled`: the caller coloured it itself (and sanitized each piece it coloured), so its own SGR
 * codes are kept.
 */
export function forTerminal(text: string, styled = false): string {
  if (!styled) return terminalText(text);
  return text
    .split(OWN_SGR)
    .map((piece, i) => (i % 2 === 1 ? piece : terminalText(piece)))
    .join('');
}

export const EXIT = { ok: 0, error: 1, usage: 2, timeout: 2, interrupted: 130 } as const;

/** Thrown to end a command with a specific exit code after its output is written. */
export class ExitSignal extends Error {
  constructor(readonly exitCode: number) {
    super(`exit ${exitCode}`);
  }
}

export interface Output {
  json: boolean;
  /** A result: JSON (pretty, exact) with --json, else the given text lines made safe for a terminal. */
  result(value: unknown, text: () => string, options?: { styled?: boolean }): void;
  /** One line of NDJSON or text (for --follow streams); text (not --json) is made safe for a terminal. */
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
    result(value, text, options) {
      process.stdout.write(json ? JSON.stringify(value, null, 2) + '\n' : forTerminal(text(), options?.styled) + '\n');
    },
    line(text) {
      process.stdout.write((json ? text : forTerminal(text)) + '\n');
    },
    bytes(data) {
      process.stdout.write(data);
    },
    note(text) {
      process.stderr.write(forTerminal(text) + '\n');
    },
    warn(text) {
      process.stderr.write(`Warning: ${forTerminal(text)}\n`);
    },
  };
}

/** Reports an error the way the command's mode asks for, and returns the exit code. */
export function reportError(err: unknown, json: boolean): number {
  if (err instanceof ExitSignal) return err.exitCode;
  const hubError = toHubError(err);
  if (json) process.stdout.write(JSON.stringify({ error: hubError.toJSON() }, null, 2) + '\n');
  else process.stderr.write(`Error: ${forTerminal(hubError.message)}\n`);
  if (hubError.code === 'internal' && hubError.cause instanceof Error && !json)
    process.stderr.write(`${hubError.cause.stack ?? ''}\n`);
  return exitCodeFor(hubError.code);
}
