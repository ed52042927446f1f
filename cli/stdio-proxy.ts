// `palace mcp`: a stdio MCP server that is a pass-through. On every JSON-RPC frame it looks for a
// live hub serving the same palace (the registration file), forwards the frame to its /mcp and streams
// the answer back frame by frame; otherwise it answers in-process. Stdout carries only protocol frames.
// Forwarding loads only this pass-through: the palace (SQLite, LanceDB), zod and the tool registry are
// imported the first time a frame must be answered here (issue 31: clients start one per session or
// thread, and each idle one held ~2x a bare node's memory).

import { createInterface } from 'node:readline';

import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

import type { PalaceConfig } from '../hub/src/config.js';
import { createSseParser } from '../hub/src/core/sse-frames.js';
import { httpFetch } from './http-fetch.js';
import type { Logger } from '../hub/src/log.js';
import { HubError, RPC_HUB_FAULT } from '../hub/src/errors.js';
import { leaseHolder } from '../hub/src/lease.js';
import { canonicalPalace, dialUrl, hubTokens, readLiveRegistration, readStoredToken, tokenPath } from '../hub/src/registration.js';
import { PALACE_VERSION } from '../hub/src/version.js';
import type { Caller } from '../hub/src/identity/identity.js';
import type { ToolProfile } from '../hub/src/mcp/server/profiles.js';
import type { ToolDef } from '../hub/src/mcp/tools/tool.js';
import type { McpSession } from '../hub/src/mcp/server/session.js';
import { eraOf, META_SUBSCRIPTION_ID } from '../hub/src/mcp/server/era.js';
import type { HubServices } from '../hub/src/services.js';
import type { ModernOptions, RpcMessage } from '../hub/src/mcp/server/modern.js';

const FORWARD_TIMEOUT_MS = 600_000;

interface Frame {
  id?: string | number | null;
  method?: string;
  params?: { name?: unknown; requestId?: unknown; clientInfo?: { name?: unknown; version?: unknown } };
}

/** Header-safe text: printable ASCII only, at most `max` characters. */
function headerText(value: unknown, max: number): string | undefined {
  if (typeof value !== 'string') return undefined;
  const text = value.replace(/[^\x20-\x7e]/g, '?').replace(/[()]/g, '').trim().slice(0, max);
  return text === '' ? undefined : text;
}

/** An in-process transport: frames in through deliver(), frames out through `write`. */
class LocalTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  constructor(private readonly write: (message: unknown) => void) {}
  async start(): Promise<void> {}
  async send(message: JSONRPCMessage): Promise<void> {
    this.write(message);
  }
  async close(): Promise<void> {
    this.onclose?.();
  }
  deliver(message: JSONRPCMessage): void {
    this.onmessage?.(message);
  }
}

/**
 * The data payloads of the one SSE parser (core/sse-frames.ts): push() decoded text as it arrives and
 * get back the data of every frame it completed. A frame cut off by the end of the stream is never
 * returned (end() reports whether one was pending).
 */
export class SseDataParser {
  private readonly parser = createSseParser();

  push(text: string): string[] {
    return this.parser.push(text).flatMap((frame) => (frame.data === undefined ? [] : [frame.data]));
  }

  /** Whether an incomplete frame (data with no blank line after it) was left at the end. */
  end(): boolean {
    return this.parser.end();
  }
}

/** Splits a complete text/event-stream body into its data payloads. */
export function sseData(text: string): string[] {
  const parser = new SseDataParser();
  return parser.push(text.endsWith('\n\n') ? text : `${text}\n\n`);
}

/**
 * Hands each data payload of a text/event-stream body to `emit` as it arrives, and any left at its end;
 * true when the stream ended in the middle of a frame.
 */
async function eachSseData(body: ReadableStream<Uint8Array>, emit: (payload: string) => void): Promise<boolean> {
  const parser = new SseDataParser();
  const decoder = new TextDecoder();
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    for (const payload of parser.push(decoder.decode(value, { stream: true }))) emit(payload);
  }
  for (const payload of parser.push(decoder.decode())) emit(payload);
  return parser.end();
}

/** Whether a failed forward certainly never reached the hub (so answering locally cannot duplicate it). */
function neverReached(err: unknown): boolean {
  const code = (err as { cause?: { code?: string } }).cause?.code ?? (err as { code?: string }).code;
  return code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EHOSTUNREACH';
}

type Id = string | number;

/** An error's message with its cause's (fetch reports "fetch failed" and puts the reason in the cause). */
function describe(err: unknown): string {
  const cause = (err as { cause?: unknown }).cause;
  const own = err instanceof Error ? err.message : String(err);
  return cause instanceof Error ? `${own}: ${cause.message}` : own;
}

/** The ids a frame (or batch) expects answers for: requests, not notifications or responses. */
function requestIds(parsed: unknown): Id[] {
  const ids: Id[] = [];
  for (const m of Array.isArray(parsed) ? (parsed as unknown[]) : [parsed]) {
    const f = m as Frame | null;
    if (f && typeof f === 'object' && typeof f.method === 'string' && (typeof f.id === 'string' || typeof f.id === 'number')) ids.push(f.id);
  }
  return ids;
}

/** A non-2xx body that is already a JSON-RPC error answering one of `ids` (passed through as is). */
function hubAnswer(body: string, ids: Id[]): unknown {
  try {
    const m = JSON.parse(body) as { jsonrpc?: unknown; id?: unknown; error?: unknown };
    return m && m.jsonrpc === '2.0' && m.error && ids.length === 1 && m.id === ids[0] ? m : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The stdio server's one local write rule: while another live process (a hub) holds the palace's
 * writer lease, every tool that writes (memory, the knowledge graph, mining state, and the logstream:
 * the spec's one hub serializes every write) is refused with `lease.held`, as the CLI refuses them,
 * with one message for all. Every read is still answered here.
 */
function refuseBesideHub(tool: ToolDef, palacePath: string, forwarding: boolean): void {
  if (!tool.mutating) return;
  const holder = leaseHolder(palacePath);
  if (!holder || holder.pid === process.pid) return;
  const where = `pid ${holder.pid}${holder.address ? ` at ${holder.address}` : ''}`;
  const why = forwarding
    ? 'the hub did not take this request (it is starting, stopping or not answering), so retry in a moment'
    : 'PALACE_HUB_FORWARD=0 stops this `palace mcp` from forwarding to it: unset PALACE_HUB_FORWARD to write through the hub, or stop the hub';
  throw new HubError('lease.held', `${tool.name} is refused: the palace is held by a hub (${where}) and \`palace mcp\` never writes it behind the hub's back; ${why}`, {
    data: { holder },
  });
}

/** Whether a frame calls a tool that writes (loads the tool registry: only on the rare hub-went-away road). */
async function isMutatingCall(frame: Frame): Promise<boolean> {
  if (frame.method !== 'tools/call' || typeof frame.params?.name !== 'string') return false;
  const { MUTATING_TOOLS } = await import('../hub/src/mcp/tools/registry.js');
  return MUTATING_TOOLS.has(frame.params.name);
}

/** Which bearer tokens this proxy offers the hub, for error messages (never the tokens themselves). */
interface TokenSources {
  file: string | undefined;
  env: boolean;
}

/** The JSON-RPC error for a hub that answered a forwarded frame with a non-2xx status. */
export function httpFailure(status: number, body: string, base: string, tokens: TokenSources): { message: string; data: Record<string, unknown> } {
  let hubError: { code?: unknown; message?: unknown } | undefined;
  try {
    const parsed = JSON.parse(body) as { error?: { code?: unknown; message?: unknown; data?: { code?: unknown } } };
    const e = parsed.error;
    if (e && typeof e === 'object')
      hubError = { code: typeof e.code === 'string' ? e.code : e.data?.code, message: e.message };
  } catch {
    // not JSON: the status alone says what happened
  }
  const fallbackCode = status === 401 ? 'auth.unauthorized' : status === 403 ? 'auth.forbidden' : 'hub.unreachable';
  const code = typeof hubError?.code === 'string' ? hubError.code : fallbackCode;
  const said = typeof hubError?.message === 'string' ? hubError.message : body.replace(/\s+/g, ' ').trim().slice(0, 200);
  let message: string;
  if (status === 401 && code === 'identity.unproven') {
    message = `the palace hub at ${base} refused this agent's secret (PALACE_AGENT_TOKEN; HTTP 401, identity.unproven): ${said}. Set PALACE_AGENT_TOKEN to the secret palace agent add (or rotate) printed, in the "env" of this MCP server, then restart the client`;
  } else if (status === 401) {
    const offered = [tokens.file ? `the token stored in ${tokens.file}` : undefined, tokens.env ? 'the token in PALACE_MCP_HTTP_TOKEN' : undefined].filter(Boolean);
    message =
      offered.length === 0
        ? `the palace hub at ${base} requires a bearer token (HTTP 401) and this \`palace mcp\` has none: the hub stored no token file and PALACE_MCP_HTTP_TOKEN is not set here. Set PALACE_MCP_HTTP_TOKEN to the hub's token in the "env" of this MCP server in your client's configuration, then restart the client`
        : `the palace hub at ${base} refused ${offered.join(' and ')} (HTTP 401): it was started with another token. Set PALACE_MCP_HTTP_TOKEN to the hub's token (its PALACE_MCP_HTTP_TOKEN or --token) in the "env" of this MCP server in your client's configuration, then restart the client`;
  } else if (status === 403) {
    message = `the palace hub at ${base} refused the request (HTTP 403, ${code}): ${said}`;
  } else if (status === 404) {
    message = `the address ${base} registered for this palace answered HTTP 404 to /mcp: it is not a palace hub (a stale registration?). Stop whatever listens there or start the hub again`;
  } else {
    message = `the palace hub at ${base} answered HTTP ${status} (${code})${said ? `: ${said}` : ''}${status >= 500 ? "; see the hub's log" : ''}`;
  }
  return { message, data: { code, http_status: status, hub: base } };
}

export interface StdioProxyOptions {
  config: Readonly<PalaceConfig>;
  log: Logger;
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
  fetchImpl?: typeof fetch;
  /** Tool profile to serve (mcp/server/profiles.ts); forwarded as /mcp?profile=… Default: config.mcpProfile. */
  profile?: ToolProfile;
}

export async function runStdioProxy(options: StdioProxyOptions): Promise<void> {
  const { config, log } = options;
  const output = options.output ?? process.stdout;
  // node:http, not Node's fetch: undici alone took an idle forwarding proxy from ~1.2x to ~1.7x a bare node's RSS.
  const doFetch = options.fetchImpl ?? (httpFetch as typeof fetch);
  const palacePath = canonicalPalace(config.palacePath);
  const profile = options.profile ?? config.mcpProfile;
  const mcpPath = profile === 'full' ? '/mcp' : `/mcp?profile=${profile}`;
  const write = (message: unknown): void => {
    output.write(JSON.stringify(message) + '\n');
  };
  const rpcError = (id: Id | null, message: string, data: Record<string, unknown>): void =>
    write({ jsonrpc: '2.0', id, error: { code: RPC_HUB_FAULT, message, data } });
  const inflight = new Map<Id, AbortController>();
  const cancelled = new Set<Id>();
  let announced: string | undefined;

  interface Local {
    transport: LocalTransport;
    /** Answers one 2026-07-28 request here (modern.ts), its messages to stdout. */
    modern: (message: RpcMessage, signal: AbortSignal) => Promise<void>;
    close: () => Promise<void>;
  }
  let local: Promise<Local> | undefined;
  /** 2026 requests answered here and not yet done (notifications/cancelled aborts one; a listen stays until then). */
  const localModern = new Map<Id, AbortController>();
  /** Forwarded subscriptions/listen requests (their streams stay open until stdin ends or the client cancels). */
  const forwardedListens = new Set<AbortController>();
  /** The in-process server, opened (and its modules loaded) the first time a frame is answered here. */
  const localServer = async (): Promise<Local> => {
    local ??= (async () => {
      const [{ openPalace }, { buildServer }, { ANONYMOUS, localCaller }, { ListenRegistry, serveModern }] = await Promise.all([
        import('../hub/src/palace.js'),
        import('../hub/src/mcp/server/build-server.js'),
        import('../hub/src/identity/identity.js'),
        import('../hub/src/mcp/server/modern.js'),
      ]);
      const { services, close } = openPalace(config, { role: 'local', log });
      const transport = new LocalTransport(write);
      // This process is the client's session: subscriptions and the log level live here, notifications go to stdout.
      const session: McpSession = {
        id: 'stdio',
        subscriptions: new Set(),
        logLevel: undefined,
        notify: (notification) => {
          write({ jsonrpc: '2.0', ...notification });
          return true;
        },
      };
      // The agent's secret is checked against the palace's agents file here too; a bad one refuses every write.
      let caller: Caller = ANONYMOUS;
      let refused: HubError | undefined;
      try {
        caller = localCaller(services.identity, config.agentToken);
      } catch (err) {
        refused = err as HubError;
      }
      const guardWrite = (tool: ToolDef): void => {
        if (refused) throw refused;
        refuseBesideHub(tool, palacePath, config.hubForward);
      };
      await buildServer(services, { profile, session, caller, guardWrite }).connect(transport);
      const listens = new ListenRegistry();
      const modernOptions: ModernOptions = { profile, caller, guardWrite, listens };
      const hub: HubServices = services;
      return {
        transport,
        modern: (message, signal) => serveModern(hub, modernOptions, message, { send: write, signal }),
        close: async () => {
          listens.closeAll();
          services.resourceWatch.detach(session);
          await close();
        },
      };
    })();
    // A palace that failed to open is tried again by the next frame, as before this was lazy.
    local.catch(() => (local = undefined));
    return local;
  };

  // The hub's MCP session for this client (its Mcp-Session-Id, from the answer to initialize): sent
  // on every forwarded frame; its notification stream (GET /mcp) is copied to stdout frame by frame.
  // A stream that ends (the hub restarted) is opened again on the next frame, and the resources this
  // client subscribed to are subscribed again there (the new hub adopts the session id, empty).
  const hubSession: { id?: string; base?: string; stream?: AbortController; opened: number; subscribed: Set<string>; ended: boolean } = {
    opened: 0,
    subscribed: new Set(),
    ended: false,
  };
  /** The stream ended while the client still has subscriptions: open it again on the live hub (restarted or not). */
  const reopenSoon = (): void => {
    if (hubSession.ended || hubSession.subscribed.size === 0) return;
    const timer = setTimeout(() => {
      const live = config.hubForward ? readLiveRegistration(config.home, palacePath) : undefined;
      if (!live || live.pid === process.pid || hubSession.stream) return reopenSoon();
      openNotifications(dialUrl(live), hubTokens(config.home, palacePath, config.httpToken)[0]);
    }, 500);
    timer.unref();
  };
  const openNotifications = (base: string, token: string | undefined): void => {
    const id = hubSession.id;
    if (!id || (hubSession.stream && hubSession.base === base)) return;
    hubSession.stream?.abort();
    const controller = new AbortController();
    hubSession.stream = controller;
    hubSession.base = base;
    const again = hubSession.opened++ > 0;
    const auth: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {};
    void (async () => {
      try {
        const response = await doFetch(`${base}${mcpPath}`, {
          method: 'GET',
          headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': id, ...auth },
          signal: controller.signal,
        });
        if (!response.ok || !response.body) {
          await response.body?.cancel().catch(() => undefined);
          return;
        }
        if (again)
          for (const uri of hubSession.subscribed)
            await doFetch(`${base}${mcpPath}`, {
              method: 'POST',
              headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Mcp-Session-Id': id, ...auth },
              body: JSON.stringify({ jsonrpc: '2.0', id: `palace-resubscribe-${hubSession.opened}`, method: 'resources/subscribe', params: { uri } }),
              signal: controller.signal,
            }).then((r) => r.body?.cancel());
        await eachSseData(response.body, (payload) => {
          try {
            write(JSON.parse(payload));
          } catch {
            log.warn(`the hub at ${base} sent a notification that is not JSON; dropped it`, { bytes: payload.length });
          }
        });
      } catch {
        // the hub went away or the proxy is closing: the next frame opens the stream again
      } finally {
        if (hubSession.stream === controller) {
          hubSession.stream = undefined;
          reopenSoon();
        }
      }
    })();
  };

  /** Answers `ids` of a forwarded frame the hub never answered: it may have run them, so none runs here. */
  const wentAway = async (ids: Id[], frame: Frame, base: string, failure: string): Promise<void> => {
    if (ids.length === 0) return;
    const message = `the palace hub at ${base} went away before answering (${failure}). The request may or may not have run there; ${
      (await isMutatingCall(frame)) ? 'a mutating call is never replayed locally: check its effect, then retry' : 'retry it'
    } (the next request goes to a live hub, or is answered locally when none is left)`;
    log.warn(message);
    for (const id of ids) rpcError(id, message, { code: 'hub.unreachable', hub: base });
  };

  /**
   * Forwards one frame and streams the hub's answer to stdout frame by frame. Throws only when no
   * response arrived (the caller may then answer locally); once the hub answered, every request id in
   * the frame gets exactly one answer: the hub's, or an error saying why there is none.
   */
  const forward = async (frame: Frame, text: string, ids: Id[], base: string): Promise<void> => {
    const file = readStoredToken(config.home, palacePath);
    const tokens = hubTokens(config.home, palacePath, config.httpToken);
    const controller = new AbortController();
    for (const id of ids) inflight.set(id, controller);
    let timedOut = false;
    // A 2026 subscriptions/listen is answered by a stream that stays open: no timeout.
    const listen = frame.method === 'subscriptions/listen';
    if (listen) forwardedListens.add(controller);
    const timer = setTimeout(
      () => {
        timedOut = true;
        controller.abort();
      },
      listen ? 2 ** 31 - 1 : FORWARD_TIMEOUT_MS,
    );
    const answered = new Set<Id>();
    let failure: string | undefined;
    try {
      let response: Response | undefined;
      try {
        for (const token of tokens.length > 0 ? tokens : [undefined]) {
          if (response) await response.body?.cancel().catch(() => undefined);
          response = await doFetch(`${base}${mcpPath}`, {
            method: 'POST',
            headers: {
              'Content-Type': 'application/json',
              Accept: 'application/json, text/event-stream',
              'User-Agent': userAgent,
              ...(token ? { Authorization: `Bearer ${token}` } : {}),
              ...(hubSession.id ? { 'Mcp-Session-Id': hubSession.id } : {}),
              // The agent's own secret (PALACE_AGENT_TOKEN): the hub binds this session's writes to it.
              ...(config.agentToken ? { 'X-Palace-Agent-Token': config.agentToken } : {}),
            },
            body: text,
            signal: controller.signal,
          });
          if (response.status !== 401) {
            const sid = response.headers.get('mcp-session-id');
            if (sid && sid !== hubSession.id) {
              hubSession.id = sid;
              hubSession.stream?.abort();
              hubSession.stream = undefined;
            }
            if (response.ok) openNotifications(base, token);
            break;
          }
        }
      } catch (err) {
        // Cancelled by the client: no answer is due. Timed out: the hub has it, so never run it here.
        if (!controller.signal.aborted) throw err;
        if (timedOut) failure = `no answer within ${FORWARD_TIMEOUT_MS / 1000} s`;
        return;
      }
      if (!response) throw new Error('no response');
      try {
        if (!response.ok) {
          const body = await response.text();
          const passThrough = hubAnswer(body, ids);
          if (passThrough) {
            write(passThrough);
            return;
          }
          const { message, data } = httpFailure(response.status, body, base, {
            file: file ? tokenPath(config.home, palacePath) : undefined,
            env: config.httpToken !== undefined && config.httpToken !== file,
          });
          log.warn(message);
          for (const id of ids) {
            rpcError(id, message, data);
            answered.add(id);
          }
          return;
        }
        const emit = (payload: string): void => {
          let parsed: unknown;
          try {
            parsed = JSON.parse(payload);
          } catch {
            log.warn(`the hub at ${base} sent a frame that is not JSON; dropped it`, { bytes: payload.length });
            return;
          }
          for (const message of Array.isArray(parsed) ? (parsed as unknown[]) : [parsed]) {
            const m = message as { id?: unknown; method?: unknown } | null;
            if (m && typeof m === 'object' && m.method === undefined && (typeof m.id === 'string' || typeof m.id === 'number')) answered.add(m.id);
            write(message);
          }
        };
        const type = response.headers.get('content-type') ?? '';
        if (type.includes('text/event-stream') && response.body) {
          if (await eachSseData(response.body, emit)) failure = 'its stream ended in the middle of a frame';
        } else {
          const body = await response.text();
          if (body.trim() !== '') emit(body);
        }
        failure ??= 'its stream ended without a result';
      } catch (err) {
        failure = timedOut
          ? `no answer within ${FORWARD_TIMEOUT_MS / 1000} s`
          : `the connection failed: ${describe(err)}`;
      }
    } finally {
      clearTimeout(timer);
      forwardedListens.delete(controller);
      for (const id of ids) inflight.delete(id);
      const missing = ids.filter((id) => !answered.has(id) && !cancelled.has(id));
      for (const id of ids) cancelled.delete(id);
      // A listen whose stream ended (the hub stopped or went away) ends gracefully: the client listens again.
      if (listen && failure !== undefined)
        for (const id of missing) write({ jsonrpc: '2.0', id, result: { resultType: 'complete', _meta: { [META_SUBSCRIPTION_ID]: id } } });
      else if (failure !== undefined) await wentAway(missing, frame, base, failure);
    }
  };

  let userAgent = `palace-mcp/${PALACE_VERSION}`;
  const handle = async (text: string): Promise<void> => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      write({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
      return;
    }
    const frame = (parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : {}) as Frame;
    const ids = requestIds(parsed);
    const discoverInfo = frame.method === 'server/discover' ? (frame.params as { _meta?: Record<string, unknown> } | undefined)?._meta?.['io.modelcontextprotocol/clientInfo'] : undefined;
    if (frame.method === 'initialize' || discoverInfo) {
      // The MCP client this proxy serves: named in every request's User-Agent, so /statusz keys it apart
      // from other clients on this machine (a stateless hub sees clientInfo on initialize, or 2026's discover, only).
      const info = (frame.method === 'initialize' ? frame.params?.clientInfo : discoverInfo) as { name?: unknown; version?: unknown } | undefined;
      const name = headerText(info?.name, 80);
      const version = headerText(info?.version, 40);
      userAgent = `palace-mcp/${PALACE_VERSION}${name ? ` (${name}${version ? `/${version}` : ''})` : ''}`;
    }
    if (frame.method === 'notifications/cancelled') {
      const target = frame.params?.requestId;
      if ((typeof target === 'string' || typeof target === 'number') && inflight.has(target)) {
        cancelled.add(target);
        inflight.get(target)?.abort();
      }
      if (typeof target === 'string' || typeof target === 'number') localModern.get(target)?.abort();
    }
    const uri = (frame.params as { uri?: unknown } | undefined)?.uri;
    if (typeof uri === 'string' && frame.method === 'resources/subscribe') hubSession.subscribed.add(uri);
    if (typeof uri === 'string' && frame.method === 'resources/unsubscribe') hubSession.subscribed.delete(uri);
    const hub = config.hubForward ? readLiveRegistration(config.home, palacePath) : undefined;
    if (hub && hub.pid !== process.pid) {
      const base = dialUrl(hub);
      if (announced !== base) {
        log.info(`live palace hub at ${base}; forwarding stdio requests to it`);
        announced = base;
      }
      try {
        await forward(frame, text, ids, base);
        return;
      } catch (err) {
        // Only a request that certainly never reached the hub is answered here instead.
        if (!neverReached(err)) {
          await wentAway(ids, frame, base, `the connection failed: ${describe(err)}`);
          return;
        }
        log.warn(`hub at ${base} unreachable (${describe(err)}); answering locally`);
      }
    }
    const server = await localServer();
    if (!Array.isArray(parsed) && eraOf(frame) === 'modern') {
      const id = typeof frame.id === 'string' || typeof frame.id === 'number' ? frame.id : undefined;
      const controller = new AbortController();
      if (id !== undefined) localModern.set(id, controller);
      try {
        await server.modern(parsed as RpcMessage, controller.signal);
      } finally {
        if (id !== undefined && localModern.get(id) === controller) localModern.delete(id);
      }
      return;
    }
    server.transport.deliver(parsed as JSONRPCMessage);
  };

  const input = options.input ?? process.stdin;
  const lines = createInterface({ input, crlfDelay: Infinity });
  const pending = new Set<Promise<void>>();
  for await (const line of lines) {
    if (line.trim() === '') continue;
    const p = handle(line).catch((err: unknown) => log.error('stdio frame failed', { message: (err as Error).message }));
    pending.add(p);
    void p.finally(() => pending.delete(p));
  }
  // stdin ended: open listens end with it (their stream is this process's stdout).
  for (const controller of localModern.values()) controller.abort();
  for (const controller of forwardedListens) controller.abort();
  await Promise.allSettled([...pending]);
  hubSession.ended = true;
  hubSession.stream?.abort();
  // Give the local server a moment to flush responses to frames delivered just before EOF.
  await new Promise((resolve) => setImmediate(resolve));
  if (local) await (await local).close();
}
