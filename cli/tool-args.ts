// Command-line values handed to a tool. The wire contract (hub/src/mcp/contract.ts) types every
// argument; a flag's value is whatever commander parsed, and the tool's own zod schema checks it where
// the tool runs (input.invalid naming the field). `flag()` marks that hand-over, nothing else.

import type { ArgsOf, ToolName } from '../hub/src/mcp/contract.js';

declare const FLAG: unique symbol;

/** A command-line value the tool's schema checks (not the compiler). */
export interface FlagValue {
  readonly [FLAG]: true;
}

/** Passes a command-line value to a tool as-is: the tool's zod schema validates it. */
export function flag(value: unknown): FlagValue {
  return value as FlagValue;
}

/** A tool's arguments as a command fills them: every name checked, each value typed or a flag(). */
export type CliArgs<N extends ToolName> = { [K in keyof ArgsOf<N>]: ArgsOf<N>[K] | FlagValue };
