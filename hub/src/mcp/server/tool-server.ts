// The one MCP server factory's registration code: registers the given tools on an McpServer, each
// with its own zod input schema. buildServer (build-server.ts) serves the whole registry; the CLI's
// in-process road serves only the tool it calls (tool-groups.ts), so it loads only that tool's module.
// Tool results are JSON text; failures are isError results carrying {error: {code, message, field}}.

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { toJsonSchemaCompat } from '@modelcontextprotocol/sdk/server/zod-json-schema-compat.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  McpError,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type CallToolResult,
  type ServerNotification,
  type ServerRequest,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

import { HubError, toHubError, type ErrorCode } from '../../errors.js';
import { callerOfAuth, type Caller } from '../../identity/identity.js';
import { IDENTITY_FIELDS, checkIdentityArgs } from '../../memory/drawers/identity.js';
import type { HubServices } from '../../services.js';
import { AGENT_INSTRUCTIONS } from './instructions.js';
import { registerPrompts } from '../prompts/prompts.js';
import { registerResources } from '../resources/resources.js';
import { sendLog, subscribable, type McpSession } from './session.js';
import { LEAN_TOOLS, profileInstructions, type ToolProfile } from './profiles.js';
import type { ToolContext, ToolDef } from '../tools/tool.js';

export interface BuildServerOptions {
  /** Runs a handler under the hub's global request lock (tools that are not lock-free). */
  withLock?: <T>(fn: () => Promise<T>) => Promise<T>;
  /** Called before a mutating tool runs; a HubError it throws becomes the tool's error result. */
  guardWrite?: (tool: ToolDef) => void;
  /** Which tools tools/list shows (profiles.ts); every tool stays reachable. Default `full`. */
  profile?: ToolProfile;
  /**
   * The client's session, when something carries notifications to it (the HTTP hub's GET stream, the
   * stdio server): resources/subscribe and logging/setLevel need one. Absent: a one-request server.
   */
  session?: McpSession;
  /**
   * Who calls, for a server with one caller (the CLI's in-process road, `palace mcp` answering
   * locally). Without it, each request's caller comes from the HTTP auth middleware (req.auth).
   */
  caller?: Caller;
  /**
   * The request only calls or lists tools (tools/call, tools/list, ping, notifications): resources,
   * prompts and completions are left off this one-request server. They were most of the cost of
   * building it (their zod schemas and completers), paid on every stateless tools/call.
   */
  toolsOnly?: boolean;
}

/** Methods a toolsOnly server answers (notifications aside). */
const TOOLS_ONLY_METHODS: ReadonlySet<string> = new Set(['tools/call', 'tools/list', 'ping']);

/** Whether every message of a request is served by a toolsOnly server (BuildServerOptions.toolsOnly). */
export function toolsOnlyRequest(messages: ReadonlyArray<{ method?: unknown }>): boolean {
  return messages.every((m) => typeof m.method === 'string' && (TOOLS_ONLY_METHODS.has(m.method) || m.method.startsWith('notifications/')));
}

/** Resolves on the next turn of the event loop, after every microtask queued so far. */
function afterWakeUps(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function jsonResult(value: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }] };
}

let validator: AjvJsonSchemaValidator | undefined;

/**
 * One JSON-schema validator for every per-request server: building a new Ajv instance per request
 * was the largest single cost of a stateless MCP call. It holds compiled schemas only (no request state),
 * and is built on first use (elicitation only; palace tools declare no output schemas), so a one-call
 * process never builds Ajv.
 */
const sharedValidator: jsonSchemaValidator = {
  getValidator: (schema) => (validator ??= new AjvJsonSchemaValidator()).getValidator(schema),
};

/** Each tool's served schema, built once (by tool name: one name is one tool). */
const servedInputs = new Map<string, ServedInput>();

interface ServedInput {
  schema: z.ZodType<Record<string, unknown>>;
  declared: ReadonlySet<string>;
  /** Identity fields the tool's own schema requires (served optional: a proven agent may omit them). */
  requiredIdentity: ReadonlySet<string>;
}

/** How one tool is served: its zod input schema and the names it declares. */
function servedInput(tool: ToolDef): ServedInput {
  const known = servedInputs.get(tool.name);
  if (known) return known;
  // A mutating tool sees every argument name, so an identity field it does not record is refused
  // rather than stripped in silence (memory/drawers/identity.ts); other unknown arguments are dropped as before.
  // Its identity fields are optional: an agent that proved who it is may leave them out (identity.ts fills them).
  const requiredIdentity = new Set(
    Object.entries(tool.input)
      .filter(([k, v]) => tool.mutating && IDENTITY_FIELDS.has(k) && !(v as z.ZodType).safeParse(undefined).success)
      .map(([k]) => k),
  );
  const shape = tool.mutating
    ? Object.fromEntries(Object.entries(tool.input).map(([k, v]) => [k, requiredIdentity.has(k) ? (v as z.ZodType).optional() : v]))
    : tool.input;
  const schema: z.ZodType<Record<string, unknown>> = tool.mutating ? z.looseObject(shape) : z.object(shape);
  const entry: ServedInput = { schema, declared: new Set(Object.keys(tool.input)), requiredIdentity };
  servedInputs.set(tool.name, entry);
  return entry;
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** One tool as this server serves it: its parse schema, its tools/list entry, and (palace_tools, palace_call) its own runner. */
interface Served {
  tool: ToolDef;
  schema: z.ZodType<Record<string, unknown>>;
  listing: Tool;
  run?: (args: Record<string, unknown>, extra: Extra) => Promise<CallToolResult> | CallToolResult;
}

/** A tool's tools/list entry (cached per tool: the JSON schema of 64 tools is the bulk of a stateless tools/list). */
const listings = new Map<ToolDef, Tool>();
function toolListing(tool: ToolDef): Tool {
  let entry = listings.get(tool);
  if (!entry) {
    entry = describeTool(tool.name, tool.title, tool.description, servedInput(tool).schema as z.ZodObject, !tool.mutating);
    listings.set(tool, entry);
  }
  return entry;
}

function describeTool(name: string, title: string, description: string, schema: z.ZodObject, readOnly: boolean): Tool {
  return {
    name,
    title,
    description,
    inputSchema: toJsonSchemaCompat(schema, { strictUnions: true, pipeStrategy: 'input' }) as Tool['inputSchema'],
    annotations: { readOnlyHint: readOnly, openWorldHint: false },
  };
}

/**
 * A schema violation as a palace error: code input.invalid, `field` the first offending argument's
 * path (dotted), the message naming the tool and every issue (field: what is wrong).
 */
export function schemaViolation(tool: string, error: z.ZodError): HubError {
  const issues = error.issues.map((issue) => `${issue.path.join('.') || 'arguments'}: ${issue.message}`);
  const field = error.issues[0]?.path.join('.') || 'arguments';
  return new HubError('input.invalid', `invalid arguments for ${tool}: ${issues.join('; ')}`, { field });
}

/** The instructions a server gives (initialize in 2025, server/discover in 2026): the agent guide and the profile line. */
export function serverInstructions(hub: HubServices, tools: readonly ToolDef[], profile: ToolProfile): string {
  const available = tools.filter((tool) => !(hub.readOnly && tool.mutating));
  const listed = profile === 'lean' ? available.filter((tool) => LEAN_TOOLS.has(tool.name)).length + 2 : available.length;
  return `${AGENT_INSTRUCTIONS}\n${profileInstructions(profile, listed, available.length)}`;
}

/** What every per-request server of one tool set, profile and read-only state serves alike. */
interface ServedBase {
  available: readonly ToolDef[];
  instructions: string;
  /** The listed tools' entries (no per-request state: the lean profile adds its two runners per server). */
  served: ReadonlyMap<string, Served>;
  /** The tools/list result, the same for every server of this base (set by the first server built). */
  listing?: { tools: Tool[] };
}

/**
 * Built once per tool set (the registry's array, or a one-call process's few), profile and read-only
 * state: rebuilding the map of ~64 entries, the listing and the instructions on every stateless POST
 * was most of what building its server allocated. Bounded: a process sees a handful of keys.
 */
const bases = new Map<readonly ToolDef[], Map<string, ServedBase>>();
const MAX_TOOL_SETS = 16;

function servedBase(hub: HubServices, tools: readonly ToolDef[], profile: ToolProfile): ServedBase {
  const key = `${profile}:${hub.readOnly ? 'ro' : 'rw'}`;
  let byKey = bases.get(tools);
  const known = byKey?.get(key);
  if (known) return known;
  if (!byKey) {
    if (bases.size >= MAX_TOOL_SETS) bases.clear();
    byKey = new Map();
    bases.set(tools, byKey);
  }
  const available = tools.filter((tool) => !(hub.readOnly && tool.mutating));
  const listed = profile === 'lean' ? available.filter((tool) => LEAN_TOOLS.has(tool.name)) : available;
  const served = new Map<string, Served>();
  for (const tool of listed) served.set(tool.name, { tool, schema: servedInput(tool).schema, listing: toolListing(tool) });
  const base: ServedBase = { available, instructions: serverInstructions(hub, tools, profile), served };
  byKey.set(key, base);
  return base;
}

/** An MCP server for `tools` (the registry's, or the few a one-call process needs). */
export function buildToolServer(hub: HubServices, tools: readonly ToolDef[], options: BuildServerOptions = {}): McpServer {
  const profile = options.profile ?? 'full';
  const base = servedBase(hub, tools, profile);
  const { available, instructions } = base;
  const server = new McpServer(
    { name: 'palace', version: hub.version },
    { instructions, jsonSchemaValidator: sharedValidator },
  );

  /** Runs one tool on arguments its schema accepted, as a tool result (errors as isError results). */
  const invoke = async (tool: ToolDef, args: Record<string, unknown>, extra: Extra): Promise<CallToolResult> => {
    const progressToken = extra._meta?.progressToken;
    const caller = options.caller ?? callerOfAuth(extra.authInfo);
    const ctx: ToolContext = {
      caller,
      signal: extra.signal,
      progress: async (progress, total, message) => {
        if (progressToken === undefined) return;
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken, progress, ...(total === undefined ? {} : { total }), ...(message ? { message } : {}) },
        });
      },
      ...(tool.stepLocked && options.withLock ? { withLock: options.withLock } : {}),
    };
    let known = args;
    const run = async (): Promise<unknown> => tool.handler(known as never, hub, ctx);
    try {
      if (tool.mutating) {
        if (hub.readOnly) throw new HubError('hub.read_only', `${tool.name} is refused: this hub is read-only (--read-only)`);
        options.guardWrite?.(tool);
        const { declared, requiredIdentity } = servedInput(tool);
        checkIdentityArgs(tool.name, declared, args);
        const kept = Object.fromEntries(Object.entries(args).filter(([key]) => declared.has(key)));
        known = hub.identity.bind(tool.name, declared, kept, caller, requiredIdentity);
      }
      const started = performance.now();
      const value = tool.lockFree || tool.stepLocked || !options.withLock ? await run() : await options.withLock(run);
      // Wake-ups first: the waits and pushes a write's commit woke answer within the commit's own
      // microtasks; the writer's reply waits one turn, so theirs are on the wire before it (docs/evidence.md).
      if (tool.mutating) await afterWakeUps();
      sendLog(options.session, 'debug', { tool: tool.name, ms: Math.round(performance.now() - started) });
      return jsonResult(value);
    } catch (err) {
      const result = errorResult(hub, tool.name, err);
      const code = toHubError(err).code;
      // The tool and the code only: an error's message may quote the arguments.
      sendLog(options.session, code === 'internal' ? 'error' : 'warning', { tool: tool.name, code });
      return result;
    }
  };

  // tools/list and tools/call are palace's own handlers (not McpServer.registerTool): a schema
  // violation is the same isError {error: {code: 'input.invalid', message, field}} result as every
  // other failure (the SDK's is plain text), and no tools.listChanged is advertised (never sent).
  // The lean profile's two extra tools run through this request's invoke; every other entry is shared.
  let served: ReadonlyMap<string, Served> = base.served;
  if (profile === 'lean') {
    const own = new Map(base.served);
    for (const extra of moreTools(hub, tools, available, invoke)) own.set(extra.listing.name, extra);
    served = own;
  }
  const listing = (base.listing ??= { tools: [...served.values()].map((s) => s.listing) });
  const lowLevel = server.server;
  lowLevel.registerCapabilities({ tools: {} });
  lowLevel.setRequestHandler(ListToolsRequestSchema, () => listing);
  lowLevel.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name } = request.params;
    const entry = served.get(name);
    if (!entry) {
      const known = tools.some((t) => t.name === name);
      return errorResult(
        hub,
        name,
        hub.readOnly && known
          ? new HubError('hub.read_only', `${name} is refused: this hub is read-only (--read-only)`)
          : new HubError('input.invalid', `no tool '${name}' on this hub${profile === 'lean' ? '; palace_tools lists them' : ''}`, { field: 'name' }),
      );
    }
    const parsed = entry.schema.safeParse(request.params.arguments ?? {});
    if (!parsed.success) return errorResult(hub, name, schemaViolation(name, parsed.error));
    return entry.run ? entry.run(parsed.data, extra) : invoke(entry.tool, parsed.data, extra);
  });

  // Resources, prompts and completions (mcp-resources.ts, mcp-prompts.ts): McpServer's own handlers,
  // over the same services. Resources that read memory run through the tools (same lock, validation).
  const call = async (name: string, args: Record<string, unknown>): Promise<unknown> => {
    const tool = available.find((t) => t.name === name) ?? (await import('../tools/registry.js')).findTool(name);
    if (!tool) throw new HubError('input.invalid', `no tool '${name}'`, { field: 'name' });
    const parsed = servedInput(tool).schema.safeParse(args);
    if (!parsed.success) throw schemaViolation(name, parsed.error);
    const result = await invoke(tool, parsed.data, { signal: new AbortController().signal, sendNotification: async () => undefined } as unknown as Extra);
    const text = (result.content[0] as { text?: string } | undefined)?.text ?? 'null';
    const value = JSON.parse(text) as { error?: { code: ErrorCode; message: string; field?: string } };
    if (result.isError && value.error) throw new HubError(value.error.code, value.error.message, value.error.field ? { field: value.error.field } : {});
    return value;
  };
  if (!options.toolsOnly) {
    registerResources(server, hub, call);
    registerPrompts(server, hub);
  }
  // McpServer advertises listChanged for resources and prompts; palace never sends it (nor for tools).
  lowLevel.registerCapabilities({
    resources: { subscribe: true, listChanged: undefined },
    prompts: { listChanged: undefined },
    logging: {},
  });
  const session = options.session;
  const needSession = (what: string): McpSession => {
    if (!session)
      throw new McpError(-32600, `${what} needs a session: over HTTP, initialize first and send its Mcp-Session-Id (the SDK clients do), or use \`palace mcp\` over stdio`);
    return session;
  };
  lowLevel.setRequestHandler(SubscribeRequestSchema, (request) => {
    const { uri } = request.params;
    if (!subscribable(uri))
      throw new McpError(-32602, `only task and inbox resources change: subscribe to palace://task/<correlation_id> or palace://inbox/<agent>, not ${uri}`, { code: 'input.invalid', field: 'uri' });
    const s = needSession('resources/subscribe');
    s.subscriptions.add(uri);
    hub.resourceWatch.attach(s);
    return {};
  });
  lowLevel.setRequestHandler(UnsubscribeRequestSchema, (request) => {
    session?.subscriptions.delete(request.params.uri);
    return {};
  });
  lowLevel.setRequestHandler(SetLevelRequestSchema, (request) => {
    needSession('logging/setLevel').logLevel = request.params.level;
    return {};
  });
  return server;
}

function errorResult(hub: HubServices, name: string, err: unknown): CallToolResult {
  const error = toHubError(err);
  if (error.code === 'internal') hub.log.error(`${name} failed`, { message: error.message });
  return { ...jsonResult({ error: error.toJSON() }), isError: true };
}

/** The lean profile's road to every tool: palace_tools (discover) and palace_call (run by name). */
function moreTools(
  hub: HubServices,
  tools: readonly ToolDef[],
  available: readonly ToolDef[],
  invoke: (tool: ToolDef, args: Record<string, unknown>, extra: Extra) => Promise<CallToolResult>,
): Served[] {
  const byName = new Map(available.map((tool) => [tool.name, tool]));
  const unknownTool = (name: string): HubError =>
    new HubError('input.invalid', `no tool '${name}' on this hub; palace_tools lists them`, { field: 'name' });
  const toolsInput = z.object({ name: z.string().optional().describe('One tool to describe in full') });
  const callInput = z.object({
    name: z.string().describe('Tool name, e.g. palace_artifact_get'),
    arguments: z.record(z.string(), z.unknown()).optional().describe("The tool's arguments"),
  });
  const paletteTool = (name: string, title: string, mutating: boolean): ToolDef =>
    ({ name, title, description: '', input: {}, mutating, lockFree: true, handler: () => undefined }) as ToolDef;
  return [
    {
      tool: paletteTool('palace_tools', 'List palace tools', false),
      schema: toolsInput,
      listing: describeTool(
        'palace_tools',
        'List palace tools',
        "Lists every palace tool: name, title, whether it writes. With name: that tool's description and input schema. Run one with palace_call.",
        toolsInput,
        true,
      ),
      run: (raw) => {
        const args = raw as z.infer<typeof toolsInput>;
        try {
          if (args.name === undefined)
            return jsonResult({ tools: available.map((t) => ({ name: t.name, title: t.title, writes: t.mutating })) });
          const tool = byName.get(args.name);
          if (!tool) throw unknownTool(args.name);
          return jsonResult({
            name: tool.name,
            title: tool.title,
            description: tool.description,
            writes: tool.mutating,
            input_schema: z.toJSONSchema(z.object(tool.input), { unrepresentable: 'any' }),
          });
        } catch (err) {
          return errorResult(hub, 'palace_tools', err);
        }
      },
    },
    {
      tool: paletteTool('palace_call', 'Run any palace tool', true),
      schema: callInput,
      listing: {
        ...describeTool(
          'palace_call',
          'Run any palace tool',
          'Runs any palace tool by name with its arguments (see palace_tools), exactly as a direct call would.',
          callInput,
          false,
        ),
      },
      run: async (raw, extra) => {
        const args = raw as z.infer<typeof callInput>;
        const tool = byName.get(args.name);
        if (!tool)
          return errorResult(
            hub,
            'palace_call',
            hub.readOnly && tools.some((t) => t.name === args.name)
              ? new HubError('hub.read_only', `${args.name} is refused: this hub is read-only (--read-only)`)
              : unknownTool(args.name),
          );
        const parsed = servedInput(tool).schema.safeParse(args.arguments ?? {});
        if (!parsed.success) return errorResult(hub, 'palace_call', schemaViolation(tool.name, parsed.error));
        return invoke(tool, parsed.data, extra);
      },
    },
  ];
}
