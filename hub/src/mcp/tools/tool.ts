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

export interface ToolDef<Shape extends z.ZodRawShape = z.ZodRawShape> {
  name: string;
  title: string;
  description: string;
  input: Shape;
  /** Writes state: hidden from tools/list and refused on a read-only hub. */
  mutating: boolean;
  /** Runs outside the global request lock (every logstream tool does). */
  lockFree: boolean;
  /** Mutating but long: runs outside the lock and takes it per write step through `ctx.withLock`. */
  stepLocked?: boolean;
  handler(args: z.infer<z.ZodObject<Shape>>, services: HubServices, ctx: ToolContext): Promise<unknown> | unknown;
}

/** Identity helper that keeps each tool's argument types tied to its schema. */
export function defineTool<Shape extends z.ZodRawShape>(def: ToolDef<Shape>): ToolDef<Shape> {
  return def;
}
