// THE wire contract: every MCP tool's name mapped to its argument type (z.input of the zod schema the
// hub serves) and its result type (what the handler returns, as JSON). Types only: the hub client,
// the CLI and the dashboard import it with `import type`, so it loads nothing at run time.

import type { z } from 'zod';

import type { coordinationTools } from './tools/coordination-tools.js';
import type { curationTools } from './tools/curation-tools.js';
import type { diaryTools } from './tools/diary-tools.js';
import type { identityTools } from './tools/identity-tools.js';
import type { kgTools } from './tools/kg-tools.js';
import type { logstreamTools } from './tools/logstream-tools.js';
import type { memoryTools } from './tools/memory-tools.js';
import type { meshPeersTool } from './tools/mesh-tools.js';
import type { mineTools } from './tools/mine-tools.js';
import type { navigationTools } from './tools/navigation-tools.js';
import type { palaceTools } from './tools/palace-tools.js';
import type { statusTool } from './tools/status-tool.js';
import type { ToolDef } from './tools/tool.js';

/** Every tool definition of the registry (registry.ts), each with its own name, schema and result. */
type Defined =
  | (typeof logstreamTools)[number]
  | (typeof coordinationTools)[number]
  | (typeof identityTools)[number]
  | (typeof memoryTools)[number]
  | (typeof mineTools)[number]
  | typeof statusTool
  | typeof meshPeersTool
  | (typeof kgTools)[number]
  | (typeof diaryTools)[number]
  | (typeof palaceTools)[number]
  | (typeof curationTools)[number]
  | (typeof navigationTools)[number];

/** The name of a tool palace serves. */
export type ToolName = Defined['name'];

type DefOf<N extends ToolName> = Extract<Defined, { name: N }>;

/**
 * A value as it arrives after JSON.stringify/JSON.parse: Dates become strings, undefined members and
 * functions drop out. Tool results are sent as JSON text (tool-server.ts jsonResult).
 */
export type Wire<T> = T extends Date
  ? string
  : T extends { toJSON(): infer J }
    ? Wire<J>
    : T extends readonly unknown[]
      ? { -readonly [K in keyof T]: Wire<T[K]> }
      : T extends (...args: never[]) => unknown
        ? never
        : T extends object
          ? { [K in keyof T as T[K] extends (...args: never[]) => unknown ? never : K]: Wire<T[K]> }
          : T;

/**
 * The argument names that name the writer (memory/drawers/identity.ts IDENTITY_FIELDS): a mutating
 * tool serves them optional, since an agent that proved who it is may leave them out.
 */
export type IdentityField = 'created_by' | 'added_by' | 'agent_name' | 'agent' | 'from_agent' | 'author' | 'writer';

type IdentityOptional<A> = Omit<A, IdentityField> & Partial<Pick<A, Extract<keyof A, IdentityField>>>;
type Flat<T> = { [K in keyof T]: T[K] };

/** The arguments a client sends to tool `N` (optional members may be left out). */
export type ArgsOf<N extends ToolName> =
  DefOf<N> extends ToolDef<infer S, N, unknown, infer M> ? (true extends M ? Flat<IdentityOptional<z.input<z.ZodObject<S>>>> : z.input<z.ZodObject<S>>) : never;

/** What tool `N` answers, as the client reads it. */
export type ResultOf<N extends ToolName> = DefOf<N> extends ToolDef<z.ZodRawShape, N, infer R> ? Wire<Awaited<R>> : never;

/** The whole contract as one map: tool name to {args, result}. */
export type ToolContract = { [N in ToolName]: { args: ArgsOf<N>; result: ResultOf<N> } };
