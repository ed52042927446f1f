// Who is calling, and may they write under the name they give: the one place the hub resolves
// presented credentials (an agent's secret, the hub token, or nothing) into a Caller, and binds a
// mutating tool call's identity fields to it. The HTTP auth middleware, the MCP tool factory and the
// in-process roads (CLI, `palace mcp` without a hub) all call it. Threat model: docs/identity.md.

import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';

import { HubError } from '../errors.js';
import { IDENTITY_FIELDS } from '../memory/drawers/identity.js';
import { createAgentRegistry, type AgentRegistry } from './agent-registry.js';
import { DESK_NAME, checkAppendType, isReservedName } from './names.js';

/** `open`: unregistered names are believed (a loopback hub's default); `enforced`: only registered agents (and the desk) write. */
export type IdentityMode = 'open' | 'enforced';
export const IDENTITY_MODES = ['open', 'enforced'] as const;

/** Who made a request, as far as the hub can prove it. */
export type Caller =
  /** Presented a registered, active agent secret. */
  | { kind: 'agent'; name: string; capabilities: readonly string[]; harness: string | null }
  /** Presented the hub token (the operator; the human at the desk). */
  | { kind: 'operator' }
  /** Presented nothing, on a hub that has no token (open loopback) or through the local in-process road. */
  | { kind: 'anonymous' };

export const ANONYMOUS: Caller = Object.freeze({ kind: 'anonymous' });
export const OPERATOR: Caller = Object.freeze({ kind: 'operator' });

/** The header an agent may present its secret in (besides `Authorization: Bearer <secret>`). */
export const AGENT_TOKEN_HEADER = 'x-palace-agent-token';

export interface IdentityService {
  readonly mode: IdentityMode;
  readonly registry: AgentRegistry;
  /** The caller an agent secret proves, or an identity.unproven error (unknown, revoked or retired). */
  agentOf(secret: string): Caller & { kind: 'agent' };
  /**
   * Binds one mutating tool call to `caller`: returns the arguments with the writer filled in (an
   * agent that named nobody), or throws identity.mismatch / .unproven / .unregistered / .reserved,
   * or event.hub_only for a raw append of a hub-only type. Nothing is written on a throw.
   */
  bind(
    tool: string,
    declared: ReadonlySet<string>,
    args: Record<string, unknown>,
    caller: Caller,
    /** Identity fields the tool requires (the operator's unnamed write goes to the desk only there). */
    required?: ReadonlySet<string>,
  ): Record<string, unknown>;
  /** Whether `caller` writing as `writer` is the human at the desk (may release anyone's claim). */
  isDesk(caller: Caller, writer: string): boolean;
  /** The status block (/statusz, palace_status, the dashboard): mode and registered agents. */
  describe(): { mode: IdentityMode; agents: number; hub_token: boolean };
}

/** Fields a filled-in writer goes to, in order of preference (the first the tool declares). */
const FILL_ORDER = ['from_agent', 'agent_name', 'created_by', 'agent', 'added_by', 'author', 'writer'];

/** Tools whose writer is named per item (bound there with bindNested), not at the top level. */
const NESTED_WRITER_TOOLS: ReadonlySet<string> = new Set(['palace_add_drawers']);

/** The caller an MCP request carries (set by the HTTP auth middleware as `req.auth`), or anonymous. */
export function callerOfAuth(auth: AuthInfo | undefined): Caller {
  const caller = auth?.extra?.caller as Caller | undefined;
  return caller && typeof caller === 'object' && 'kind' in caller ? caller : ANONYMOUS;
}

/** The AuthInfo the MCP SDK hands to tool handlers as `extra.authInfo` (no secret in it). */
export function authOfCaller(caller: Caller): AuthInfo {
  return {
    token: '',
    clientId: caller.kind === 'agent' ? caller.name : caller.kind,
    scopes: [],
    extra: { caller },
  };
}

/** The caller of a one-caller road (the CLI in-process, `palace mcp` answering locally): the agent its secret proves, else anonymous. */
export function localCaller(identity: IdentityService, secret: string | undefined): Caller {
  return secret ? identity.agentOf(secret) : ANONYMOUS;
}

export interface IdentityOptions {
  palacePath: string;
  mode: IdentityMode;
  /** The hub has a bearer token (then an anonymous caller cannot reach it at all). */
  hubToken: boolean;
  registry?: AgentRegistry;
}

export function createIdentityService(options: IdentityOptions): IdentityService {
  const registry = options.registry ?? createAgentRegistry(options.palacePath);
  const { mode } = options;

  const refuseUnproven = (name: string, field: string | undefined): HubError =>
    new HubError(
      'identity.unproven',
      `'${name}' is a registered agent: present its secret (PALACE_AGENT_TOKEN for palace mcp and the CLI, or Authorization: Bearer <secret> / X-Palace-Agent-Token over HTTP); nothing was written`,
      { ...(field === undefined ? {} : { field }), data: { agent: name } },
    );

  return {
    mode,
    registry,
    agentOf(secret) {
      const agent = registry.bySecret(secret.trim());
      if (!agent)
        throw new HubError(
          'identity.unproven',
          'unknown, revoked or retired agent secret (palace agent list; palace agent rotate <name> issues a new one)',
        );
      return { kind: 'agent', name: agent.name, capabilities: agent.capabilities, harness: agent.harness };
    },
    bind(tool, declared, args, caller, required = new Set<string>()) {
      const bound = bindWriter(tool, declared, args, caller, required);
      // After the name: writing as `hub` is refused as such, whatever the type.
      if (tool === 'palace_event_append') checkAppendType(args.type);
      return bound;
    },
    isDesk(caller, writer) {
      if (caller.kind === 'operator') return true;
      // An open hub with no token: the desk's default name is believed, like every unregistered name.
      return caller.kind === 'anonymous' && !options.hubToken && mode === 'open' && writer === DESK_NAME;
    },
    describe: () => ({
      mode,
      agents: registry.list().filter((a) => a.state === 'active').length,
      hub_token: options.hubToken,
    }),
  };

  function bindWriter(
    tool: string,
    declared: ReadonlySet<string>,
    args: Record<string, unknown>,
    caller: Caller,
    required: ReadonlySet<string>,
  ): Record<string, unknown> {
    const fields = FILL_ORDER.filter((f) => declared.has(f) && IDENTITY_FIELDS.has(f));
    if (fields.length === 0) {
      // A write that records no writer (a move, a delete, a mine): an enforced hub still wants it proven.
      if (caller.kind === 'anonymous' && mode === 'enforced' && !NESTED_WRITER_TOOLS.has(tool))
        throw new HubError(
          'identity.unproven',
          `${tool} writes to the palace and this hub enforces identity: present your agent secret (or the hub token); nothing was written`,
        );
      return args;
    }
    const givenField = fields.find((f) => typeof args[f] === 'string' && (args[f] as string).trim() !== '');
    const given = givenField === undefined ? undefined : (args[givenField] as string).trim();
    if (caller.kind === 'agent') {
      if (given !== undefined && given !== caller.name)
        throw new HubError(
          'identity.mismatch',
          `you are '${caller.name}' (by your secret) but ${givenField} says '${given}'; leave it out or give your own name; nothing was written`,
          { field: givenField, data: { agent: caller.name, given } },
        );
      return given === undefined ? { ...args, [fields[0] as string]: caller.name } : args;
    }
    if (given === undefined) {
      // The hub-token holder is the human at the desk: a write naming nobody is the desk's (where the
      // tool needs a writer; an optional one keeps the tool's own default).
      if (caller.kind === 'operator') return required.has(fields[0] as string) ? { ...args, [fields[0] as string]: DESK_NAME } : args;
      if (mode === 'enforced')
        throw new HubError(
          'identity.unproven',
          `${tool} needs a proven writer on this hub (identity mode enforced): present your agent secret`,
          { field: fields[0] },
        );
      return args;
    }
    if (isReservedName(given))
      throw new HubError(
        'identity.reserved',
        `'${given}' is reserved for the hub; no client writes under it; nothing was written`,
        { field: givenField },
      );
    if (registry.get(given)) throw refuseUnproven(given, givenField);
    if (mode === 'enforced' && !(caller.kind === 'operator' && given === DESK_NAME))
      throw new HubError(
        'identity.unregistered',
        `'${given}' is not a registered agent and this hub enforces identity: register it (palace agent add ${given}) and present its secret${caller.kind === 'operator' ? `; the hub token writes only as '${DESK_NAME}'` : ''}; nothing was written`,
        { field: givenField, data: { given } },
      );
    return args;
  }
}
