// What a tool is in palace: name, description, zod input shape, whether it mutates state (hidden
// and refused on a read-only hub) and whether it runs outside the hub's global request lock.

import type { z } from 'zod';

import type { Caller } from '../../identity/identity.js';
import type { HubServices } from '../../services.js';

/** Per-call context handed to a tool handler by the server factory. */
export interface ToolContext {
  /** Who calls (identity/identity.ts): an agent proven by its secret, the hub-token holder, or anonymous. */
  caller: Caller;
  signal: AbortSignal;
  /** Reports progress to clients that asked for it (resets their request timeout). */
  progress(progress: number, total?: number, message?: string): Promise<void>;
  /** Runs one write step under the hub's global request lock (set for `stepLocked` tools on the hub). */
  withLock?: <T>(fn: () => Promise<T>) => Promise<T>;
}

/**
 * One tool. `Name` and `Result` are kept as literal and inferred types by defineTool, so the wire
 * contract (mcp/contract.ts) maps each tool name to its argument and result types.
 */
export interface ToolDef<Shape extends z.ZodRawShape = z.ZodRawShape, Name extends string = string, Result = unknown, Mutating extends boolean = boolean> {
  name: Name;
  title: string;
  description: string;
  input: Shape;
  /** Writes state: hidden from tools/list and refused on a read-only hub (and its identity arguments may be left out). */
  mutating: Mutating;
  /** Runs outside the global request lock (every logstream tool does). */
  lockFree: boolean;
  /** Mutating but long: runs outside the lock and takes it per write step through `ctx.withLock`. */
  stepLocked?: boolean;
  handler(args: z.infer<z.ZodObject<Shape>>, services: HubServices, ctx: ToolContext): Promise<Result> | Result;
}

/**
 * Identity helper that keeps each tool's argument types tied to its schema, its name literal and its
 * result type (inferred from the handler, or stated as `defineTool<Result>()({...})` to check the handler).
 */
export function defineTool<const Name extends string, Shape extends z.ZodRawShape, Result, const Mutating extends boolean>(
  def: ToolDef<Shape, Name, Result, Mutating>,
): ToolDef<Shape, Name, Result, Mutating> {
  return def;
}
