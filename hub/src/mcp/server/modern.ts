// MCP 2026-07-28 beside 2025 (issue 33; docs/decisions.md, "The 2026-07-28 era"). A 2026 request
// carries its protocol version and client capabilities in `_meta` and needs no initialize; it is
// answered here, transport-agnostic (the HTTP route frames it as JSON or SSE, `palace mcp` writes it
// to stdout). Tools, resources, prompts and completion run through the same per-request server as
// 2025 (buildServer over a one-request transport); this module adds what 2026 changes: server/discover,
// `resultType` and cache hints on results, the per-request log level, subscriptions/listen (fed by the
// palace's ResourceWatch) and the Tasks extension (mcp-tasks.ts). Identity never comes from clientInfo:
// the caller is the one the HTTP auth middleware proved (authInfo) or the road's own (options.caller).

import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { SUPPORTED_PROTOCOL_VERSIONS, type JSONRPCMessage, type LoggingLevel } from '@modelcontextprotocol/sdk/types.js';

import { HubError, RPC_HUB_FAULT, toHubError } from '../../errors.js';
import { callerOfAuth, type Caller } from '../../identity/identity.js';
import { TASK_URI, subscribable, taskUri, type Subscriber } from '../../logstream/resource-watch.js';
import type { HubServices } from '../../services.js';
import { buildServer } from './build-server.js';
import { isModernVersion, META_PROTOCOL_VERSION, META_SUBSCRIPTION_ID, MODERN_VERSION } from './era.js';
import { declaresTasks, delegationTask, tasksCancel, tasksGet, tasksUpdate, TASKS_EXTENSION, mcpTaskOf } from './mcp-tasks.js';
import { TOOLS } from '../tools/registry.js';
import type { McpSession } from './session.js';
import { serverInstructions, toolsOnlyRequest, type BuildServerOptions } from './tool-server.js';

export { eraOf, isModernVersion, MODERN_VERSION } from './era.js';
/** Every version palace speaks, newest first: 2026-07-28 and the 2025-era versions the 1.x SDK accepts. */
export const SUPPORTED_VERSIONS: readonly string[] = [MODERN_VERSION, ...SUPPORTED_PROTOCOL_VERSIONS];

export const META_CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
export const META_SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
export const META_LOG_LEVEL = 'io.modelcontextprotocol/logLevel';

/** The 2026 spec's codes: the requested version is not served; an HTTP header disagrees with the body. */
export const RPC_UNSUPPORTED_VERSION = -32022;
export const RPC_HEADER_MISMATCH = -32020;

const LOG_LEVELS: readonly LoggingLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

/** Methods of the 2025 era that 2026-07-28 removed, with what replaces each. */
const REMOVED: Readonly<Record<string, string>> = {
  initialize: 'send server/discover, or nothing: every 2026 request carries its version in _meta',
  ping: 'any request shows the server is alive',
  'logging/setLevel': `set the level per request in _meta["${META_LOG_LEVEL}"]`,
  'resources/subscribe': 'open subscriptions/listen with notifications.resourceSubscriptions',
  'resources/unsubscribe': 'close the subscriptions/listen stream',
};

/** Methods answered through the same per-request server as 2025. */
const SHARED = new Set([
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'prompts/list',
  'prompts/get',
  'completion/complete',
]);

/**
 * Cache hints (2026 `ttlMs`, `cacheScope`): the lists never change while a hub runs (5 minutes covers an
 * upgrade); resources/list and most reads change with every event (0); an event or an artifact never
 * changes. Private wherever palace data is in the answer.
 */
const LIST_CACHE = { ttlMs: 300_000, cacheScope: 'public' } as const;
const NO_CACHE = { ttlMs: 0, cacheScope: 'private' } as const;
const CACHE: Readonly<Record<string, { ttlMs: number; cacheScope: 'public' | 'private' }>> = {
  'server/discover': LIST_CACHE,
  'tools/list': LIST_CACHE,
  'prompts/list': LIST_CACHE,
  'resources/templates/list': LIST_CACHE,
  'resources/list': NO_CACHE,
};
const IMMUTABLE_URI = /^palace:\/\/(event|artifact)\//;
/** The most resource URIs (and, apart, task ids) one subscriptions/listen may name. */
const MAX_LISTEN_ITEMS = 256;

export interface RpcMessage {
  jsonrpc?: unknown;
  id?: unknown;
  method?: unknown;
  params?: Record<string, unknown>;
  result?: unknown;
  error?: unknown;
}

function metaOf(message: RpcMessage): Record<string, unknown> {
  const meta = message.params && typeof message.params === 'object' ? message.params._meta : undefined;
  return meta && typeof meta === 'object' && !Array.isArray(meta) ? (meta as Record<string, unknown>) : {};
}

/** Where a 2026 request's messages go, and what the road knows about it. */
export interface ModernChannel {
  /** Writes one message for this request: a notification (progress, log, listen) or the response. */
  send(message: Record<string, unknown>): void;
  /** Aborted when the client goes away (HTTP: the connection closed; stdio: notifications/cancelled). */
  signal: AbortSignal;
  /** The caller the HTTP auth middleware proved (req.auth); absent on the one-caller roads. */
  authInfo?: AuthInfo;
  /** The MCP-Protocol-Version header (HTTP), checked against the `_meta` version. */
  headerVersion?: string;
}

/** Open subscriptions/listen streams of one hub (or one stdio server): ended gracefully on shutdown. */
export class ListenRegistry {
  private readonly open = new Set<{ end: () => void; subscribed: boolean }>();

  /** At most `max` open at once (as many as the 2025 era's sessions): each holds a socket and a watcher entry. */
  constructor(readonly max = 1_024) {}

  get full(): boolean {
    return this.open.size >= this.max;
  }

  add(entry: { end: () => void; subscribed: boolean }): () => void {
    this.open.add(entry);
    return () => this.open.delete(entry);
  }

  /** Listens that wait for something (the hub does not idle out while one is open). */
  get listening(): number {
    let n = 0;
    for (const e of this.open) if (e.subscribed) n++;
    return n;
  }

  closeAll(): void {
    for (const e of [...this.open]) e.end();
  }
}

export interface ModernOptions extends BuildServerOptions {
  listens?: ListenRegistry;
}

/** A JSON-RPC error object as 2026 sends it (a resource that does not exist is -32602 with data.uri there). */
function rpcError(id: unknown, code: number, message: string, data?: Record<string, unknown>): Record<string, unknown> {
  return { jsonrpc: '2.0', id: id ?? null, error: { code, message, ...(data === undefined ? {} : { data }) } };
}

function hubFault(id: unknown, err: unknown): Record<string, unknown> {
  const e = toHubError(err);
  const code = e.code === 'input.invalid' || e.code === 'log.event_not_found' ? -32602 : RPC_HUB_FAULT;
  return rpcError(id, code, e.message, { code: e.code, ...(e.field === undefined ? {} : { field: e.field }) });
}

/** A result as 2026 sends it: `resultType`, cache hints on the cacheable methods, serverInfo in `_meta`. */
export function encodeModernResult(hub: HubServices, method: string, result: Record<string, unknown>, params?: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...result };
  out.resultType ??= 'complete';
  const hint =
    method === 'resources/read'
      ? typeof params?.uri === 'string' && IMMUTABLE_URI.test(params.uri)
        ? { ttlMs: 86_400_000, cacheScope: 'private' as const }
        : NO_CACHE
      : CACHE[method];
  if (hint && out.resultType === 'complete') {
    out.ttlMs ??= hint.ttlMs;
    out.cacheScope ??= hint.cacheScope;
  }
  const meta = out._meta && typeof out._meta === 'object' ? (out._meta as Record<string, unknown>) : {};
  out._meta = { ...meta, [META_SERVER_INFO]: { name: 'palace', version: hub.version } };
  return out;
}

/** The server/discover result: versions, capabilities (with the Tasks extension) and the instructions. */
export function discoverResult(hub: HubServices, options: BuildServerOptions): Record<string, unknown> {
  const profile = options.profile ?? 'full';
  return {
    supportedVersions: [...SUPPORTED_VERSIONS],
    capabilities: {
      tools: {},
      resources: { subscribe: true },
      prompts: {},
      completions: {},
      logging: {},
      extensions: { [TASKS_EXTENSION]: {} },
    },
    instructions: serverInstructions(hub, TOOLS, profile),
  };
}

/**
 * Runs one request through the 2025 per-request server (buildServer) over a one-request transport:
 * the same tools, resources, prompts, validation and identity binding. Notifications it sends
 * (progress, log messages at the request's level) go to the channel; resolves with the response, or
 * undefined when the client went away first.
 */
export async function runShared(
  hub: HubServices,
  options: BuildServerOptions,
  request: RpcMessage,
  channel: ModernChannel,
  logLevel?: LoggingLevel,
): Promise<RpcMessage | undefined> {
  const session: McpSession | undefined = logLevel
    ? {
        id: 'request',
        subscriptions: new Set(),
        logLevel,
        notify: (notification) => {
          channel.send({ jsonrpc: '2.0', ...notification });
          return true;
        },
      }
    : undefined;
  const server = buildServer(hub, { ...options, toolsOnly: toolsOnlyRequest([request]), ...(session ? { session } : {}) });
  let answer!: (m: RpcMessage | undefined) => void;
  const answered = new Promise<RpcMessage | undefined>((resolve) => (answer = resolve));
  const transport: Transport = {
    start: async () => undefined,
    close: async () => transport.onclose?.(),
    send: async (message) => {
      const m = message as RpcMessage;
      if (m.method === undefined && m.id === request.id) answer(m);
      else channel.send(m as Record<string, unknown>);
    },
  };
  await server.connect(transport);
  const cancel = (): void => {
    transport.onmessage?.({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: request.id as string | number, reason: 'the client went away' } });
    answer(undefined);
  };
  if (channel.signal.aborted) cancel();
  else channel.signal.addEventListener('abort', cancel, { once: true });
  transport.onmessage?.(request as JSONRPCMessage, channel.authInfo ? { authInfo: channel.authInfo } : undefined);
  try {
    return await answered;
  } finally {
    channel.signal.removeEventListener('abort', cancel);
    await server.close();
  }
}

/** The caller of a 2026 request: the road's own, else the one the HTTP auth middleware proved. */
function callerOf(options: BuildServerOptions, channel: ModernChannel): Caller {
  return options.caller ?? callerOfAuth(channel.authInfo);
}

/**
 * Answers one 2026-era message. Requests get exactly one response on the channel (subscriptions/listen
 * only when the hub ends it); notifications get none.
 */
export async function serveModern(hub: HubServices, options: ModernOptions, message: RpcMessage, channel: ModernChannel): Promise<void> {
  const { id } = message;
  const method = typeof message.method === 'string' ? message.method : '';
  if (id === undefined || id === null) return; // a notification (cancelled: the road aborts the request itself)
  const meta = metaOf(message);
  const declared = meta[META_PROTOCOL_VERSION];
  const version = declared ?? channel.headerVersion;
  if (channel.headerVersion !== undefined && declared !== undefined && channel.headerVersion !== declared)
    return channel.send(
      rpcError(id, RPC_HEADER_MISMATCH, `MCP-Protocol-Version header ${channel.headerVersion} disagrees with _meta["${META_PROTOCOL_VERSION}"] ${String(declared)}`, {
        code: 'input.invalid',
        field: 'MCP-Protocol-Version',
      }),
    );
  if (version !== undefined && !(typeof version === 'string' && SUPPORTED_VERSIONS.includes(version)) && (method !== 'server/discover' || isModernVersion(version)))
    return channel.send(
      rpcError(id, RPC_UNSUPPORTED_VERSION, `protocol version ${JSON.stringify(version)} is not served here; supported: ${SUPPORTED_VERSIONS.join(', ')}`, {
        supported: [...SUPPORTED_VERSIONS],
        requested: version,
      }),
    );
  if (method === 'server/discover') return channel.send({ jsonrpc: '2.0', id, result: encodeModernResult(hub, method, discoverResult(hub, options)) });
  const capabilities = meta[META_CLIENT_CAPABILITIES];
  if (!capabilities || typeof capabilities !== 'object' || Array.isArray(capabilities))
    return channel.send(
      rpcError(id, -32602, `a ${MODERN_VERSION} request carries its client capabilities in _meta["${META_CLIENT_CAPABILITIES}"] (an object, {} for none)`, {
        code: 'input.invalid',
        field: `_meta.${META_CLIENT_CAPABILITIES}`,
      }),
    );
  const removed = REMOVED[method];
  if (removed !== undefined) return channel.send(rpcError(id, -32601, `${method} is not part of MCP ${MODERN_VERSION}: ${removed}`));
  const level = meta[META_LOG_LEVEL];
  if (level !== undefined && !LOG_LEVELS.includes(level as LoggingLevel))
    return channel.send(rpcError(id, -32602, `_meta["${META_LOG_LEVEL}"] must be one of ${LOG_LEVELS.join(', ')}`, { code: 'input.invalid', field: `_meta.${META_LOG_LEVEL}` }));
  const params = message.params ?? {};
  try {
    if (method === 'subscriptions/listen') return await listen(hub, options, message, channel);
    if (method === 'tasks/get') return channel.send({ jsonrpc: '2.0', id, result: encodeModernResult(hub, method, tasksGet(hub, params)) });
    if (method === 'tasks/cancel' || method === 'tasks/update') {
      const run = (request: RpcMessage) => runShared(hub, options, request, channel);
      const caller = callerOf(options, channel);
      const result = method === 'tasks/cancel' ? await tasksCancel(hub, params, caller, run) : await tasksUpdate(hub, params, caller, run);
      return channel.send({ jsonrpc: '2.0', id, result: encodeModernResult(hub, method, result) });
    }
  } catch (err) {
    return channel.send(hubFault(id, err));
  }
  if (!SHARED.has(method)) return channel.send(rpcError(id, -32601, `Method not found: ${method}`));
  const response = await runShared(hub, options, message, channel, level as LoggingLevel | undefined);
  if (!response) return;
  if (response.error && typeof response.error === 'object') {
    const error = response.error as { code: number; message: string; data?: unknown };
    // 2026: a resource that does not exist is invalid params, with the URI in data.
    if (error.code === -32002) {
      const data = error.data && typeof error.data === 'object' ? (error.data as Record<string, unknown>) : {};
      return channel.send(rpcError(id, -32602, error.message, { ...data, uri: params.uri }));
    }
    return channel.send(response as Record<string, unknown>);
  }
  let result = (response.result ?? {}) as Record<string, unknown>;
  if (method === 'tools/call' && declaresTasks(meta)) result = delegationTask(hub, params, result) ?? result;
  channel.send({ jsonrpc: '2.0', id, result: encodeModernResult(hub, method, result, params) });
}

/**
 * subscriptions/listen: acknowledges the filter palace honors (task and inbox resources; MCP task ids),
 * then sends `resources/updated` (and, for task ids, `notifications/tasks` with the task) on each
 * change until the client goes away. Ends with an empty result when the hub shuts down.
 */
async function listen(hub: HubServices, options: ModernOptions, message: RpcMessage, channel: ModernChannel): Promise<void> {
  const id = message.id;
  const filter = message.params?.notifications;
  if (!filter || typeof filter !== 'object' || Array.isArray(filter))
    throw new HubError('input.invalid', 'subscriptions/listen needs params.notifications (the filter: resourceSubscriptions, taskIds)', { field: 'notifications' });
  const asked = filter as Record<string, unknown>;
  // Every commit checks every subscribed URI: a filter is bounded, and so is the number of open listens.
  for (const key of ['resourceSubscriptions', 'taskIds'])
    if (Array.isArray(asked[key]) && (asked[key] as unknown[]).length > MAX_LISTEN_ITEMS)
      throw new HubError('input.invalid', `notifications.${key} lists at most ${MAX_LISTEN_ITEMS} entries; open another subscriptions/listen for more`, {
        field: `notifications.${key}`,
      });
  if (options.listens?.full)
    throw new HubError('http.busy', `too many open subscriptions/listen streams (${options.listens.max}): close one, or retry later`, { data: { retry_after_ms: 1_000 } });
  const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);
  const resources = [...new Set(strings(asked.resourceSubscriptions).filter(subscribable))];
  const taskIds = [...new Set(strings(asked.taskIds))].filter((t) => {
    try {
      hub.logstream.task(t);
      return true;
    } catch {
      return false;
    }
  });
  const honored: Record<string, unknown> = {};
  if (asked.resourceSubscriptions !== undefined) honored.resourceSubscriptions = resources;
  if (asked.taskIds !== undefined) honored.taskIds = taskIds;
  const stamp = (params: Record<string, unknown>): Record<string, unknown> => ({ ...params, _meta: { [META_SUBSCRIPTION_ID]: id } });
  channel.send({ jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: stamp({ notifications: honored }) });
  const resourceSet = new Set(resources);
  const taskSet = new Set(taskIds);
  const subscriber: Subscriber = {
    subscriptions: new Set([...resources, ...taskIds.map(taskUri)]),
    notify: (notification) => {
      const uri = (notification.params as { uri?: unknown } | undefined)?.uri;
      if (typeof uri !== 'string') return false;
      if (resourceSet.has(uri)) channel.send({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: stamp({ uri }) });
      const taskId = uri.startsWith(TASK_URI) ? decodeURIComponent(uri.slice(TASK_URI.length)) : undefined;
      if (taskId !== undefined && taskSet.has(taskId)) {
        try {
          channel.send({ jsonrpc: '2.0', method: 'notifications/tasks', params: stamp(mcpTaskOf(hub.logstream.task(taskId), hub)) });
        } catch (err) {
          hub.log.warn('subscriptions/listen: reading a task failed', { message: (err as Error).message });
        }
      }
      return true;
    },
  };
  if (subscriber.subscriptions.size > 0) hub.resourceWatch.attach(subscriber);
  let graceful = false;
  let finish = (): void => undefined;
  await new Promise<void>((resolve) => {
    const remove = options.listens?.add({
      subscribed: subscriber.subscriptions.size > 0,
      end: () => {
        graceful = true;
        resolve();
      },
    });
    const gone = (): void => resolve();
    finish = () => {
      remove?.();
      channel.signal.removeEventListener('abort', gone);
    };
    if (channel.signal.aborted) resolve();
    else channel.signal.addEventListener('abort', gone, { once: true });
  });
  finish();
  hub.resourceWatch.detach(subscriber);
  if (graceful && !channel.signal.aborted) channel.send({ jsonrpc: '2.0', id, result: encodeModernResult(hub, 'subscriptions/listen', stamp({})) });
}
