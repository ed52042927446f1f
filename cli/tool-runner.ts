// The CLI's one road into the palace: a tool call goes through the typed tool client to this palace's
// live hub (so the hub stays the only writer and wakes its waiters at once), or, with no hub, through
// the same client to the same MCP server in-process, as a JSON-RPC handler (same zod validation, same
// errors). Arguments and results are typed by the wire contract (hub/src/mcp/contract.ts).

import type { PalaceConfig } from '../hub/src/config.js';
import { ERROR_CODES, HubError, type ErrorCode } from '../hub/src/errors.js';
import type { HubClientError, ToolCallOptions, ToolClient } from '../hub/src/client/tool-client.js';
import type { ArgsOf, ResultOf, ToolName } from '../hub/src/mcp/contract.js';
import { liveHub, type LiveHub } from '../hub/src/registration.js';
import { unauthorized } from './hub-auth.js';
import type { CliArgs } from './tool-args.js';

/** The one place a command's flags become the contract's arguments: the tool's zod schema checks them where it runs. */
const checkedThere = <N extends ToolName>(args: CliArgs<N>): ArgsOf<N> => args as ArgsOf<N>;

/** Options of one CLI tool call. */
export interface RunToolOptions {
  /** Progress reports of a long tool (a mine): asked of the hub as MCP progress notifications. */
  onProgress?: (progress: number, total: number | undefined, message: string | undefined) => void;
}

/** A hub client failure as the HubError the CLI reports (its code picks the exit code). */
function fromClient(err: unknown, base: string, sentToken = false): HubError {
  const e = err as HubClientError;
  if (e?.name !== 'HubClientError') return err instanceof HubError ? err : new HubError('internal', (err as Error).message ?? String(err), { cause: err });
  if (e.status === 401 && e.code === 'identity.unproven') return new HubError('identity.unproven', `the hub at ${base} refused PALACE_AGENT_TOKEN: ${e.message}`);
  if (e.status === 401) return unauthorized(base, sentToken);
  if (e.status === 403) return new HubError('auth.forbidden', `the hub at ${base} refused the request (HTTP 403)`);
  if (e.status === 404) return new HubError('http.not_found', `the hub at ${base} has no /mcp (HTTP 404)`);
  if (e.code === 'hub.unreachable') return new HubError('hub.unreachable', `the hub at ${base} is unreachable: ${e.message}`);
  const code: ErrorCode = e.code in ERROR_CODES ? (e.code as ErrorCode) : 'internal';
  return new HubError(code, e.message, e.field ? { field: e.field } : {});
}

/** A caller of tools on one road, for a command that makes many calls (watch): open once, close once. */
export interface ToolSession {
  /** Calls a tool; with a signal, an abort rejects at once (the hub request is cancelled too). */
  call<N extends ToolName>(name: N, args: CliArgs<N>, options?: ToolCallOptions): Promise<ResultOf<N>>;
  close(): Promise<void>;
}

function hubSession(hub: LiveHub, agentToken: string | undefined): ToolSession {
  const tokens = hub.tokens.length > 0 ? hub.tokens : [undefined];
  let first = 0; // the first token the hub accepted
  return {
    async call(name, args, options = {}) {
      const [{ createHubClient }, { httpFetch }] = await Promise.all([import('../hub/src/client/hub-client.js'), import('./http-fetch.js')]);
      for (let i = first; ; i++) {
        try {
          const result = await createHubClient({ baseUrl: hub.url, token: tokens[i], agentToken, fetch: httpFetch }).call(name, checkedThere<typeof name>(args), options);
          first = i;
          return result;
        } catch (err) {
          // A stale token file beside a hub started with PALACE_MCP_HTTP_TOKEN: try the next token.
          if ((err as HubClientError).status === 401 && (err as HubClientError).code !== 'identity.unproven' && i + 1 < tokens.length) continue;
          throw fromClient(err, hub.url, tokens[i] !== undefined);
        }
      }
    },
    close: () => Promise.resolve(),
  };
}

/** Rejects when `signal` aborts: an in-process call has no request to cancel, so the caller stops waiting. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new HubError('internal', 'the call was interrupted'));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

async function inProcessSession(config: Readonly<PalaceConfig>, names: readonly string[]): Promise<ToolSession> {
  // One call per process: zod's JIT (code generated per object schema on its first parse, through
  // new Function) costs more than it saves, so schemas built from here on parse without it (same
  // results). Set before the MCP SDK builds its protocol schemas; a hub keeps the JIT.
  (await import('zod')).config({ jitless: true });
  const [{ openPalace }, { connectInProcess }, { loadTools }, { leaseHolder }, { makeLogger }, { localCaller }] = await Promise.all([
    import('../hub/src/palace.js'),
    import('../hub/src/mcp/server/in-process.js'),
    import('../hub/src/mcp/tools/tool-groups.js'),
    import('../hub/src/lease.js'),
    import('../hub/src/log.js'),
    import('../hub/src/identity/identity.js'),
  ]);
  const palace = openPalace(config, { role: 'local', log: makeLogger('palace') });
  try {
    // Only the called tools are served (and their modules loaded): the same registration and zod schemas.
    const server = await connectInProcess(palace.services, {
      tools: await loadTools(names),
      // This road only calls tools: no resources, prompts or completions are registered.
      toolsOnly: true,
      // With no hub, the agent's secret is checked against the palace's agents file all the same.
      caller: localCaller(palace.services.identity, config.agentToken),
      // Every write, logstream ones included: the spec's one hub serializes every write.
      guardWrite: () => {
        const holder = leaseHolder(palace.palacePath);
        if (holder && holder.pid !== process.pid)
          throw new HubError(
            'lease.held',
            `the palace is held by a hub (pid ${holder.pid}${holder.address ? ` at ${holder.address}` : ''}); with PALACE_HUB_FORWARD=0 direct writes are refused. Unset it to write through the hub`,
          );
      },
    });
    const client: ToolClient = server.client;
    return {
      async call(name, args, options = {}) {
        try {
          return await abortable(client.call(name, checkedThere<typeof name>(args), options), options.signal);
        } catch (err) {
          throw fromClient(err, 'this process');
        }
      },
      async close() {
        try {
          await server.close();
        } finally {
          await palace.close();
        }
      },
    };
  } catch (err) {
    await palace.close();
    throw err;
  }
}

/** Opens the road for `names`: the live hub (unless PALACE_HUB_FORWARD=0), or those tools in-process. */
export async function openToolSession(config: Readonly<PalaceConfig>, names: readonly string[]): Promise<ToolSession> {
  const hub = liveHub(config);
  return hub ? hubSession(hub, config.agentToken) : inProcessSession(config, names);
}

/** Calls a tool through the live hub (unless PALACE_HUB_FORWARD=0) or in-process: typed by the wire contract. */
export async function runTool<N extends ToolName>(
  config: Readonly<PalaceConfig>,
  name: N,
  args: CliArgs<N>,
  options: RunToolOptions = {},
): Promise<ResultOf<N>> {
  const session = await openToolSession(config, [name]);
  try {
    return await session.call(name, args, options.onProgress ? { onProgress: options.onProgress } : {});
  } finally {
    await session.close();
  }
}
