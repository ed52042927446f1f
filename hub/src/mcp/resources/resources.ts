// MCP resources (issue 33): palace's log and memory as resource templates, read from the same
// services the tools use. Tasks and inboxes change (subscribe to them: mcp-session.ts pushes
// notifications/resources/updated); events and artifacts never do. Listed: what is cheap to list
// (the newest tasks, the inboxes and wake-ups of recently active agents). Failures are JSON-RPC
// errors (resources/read has no isError result): -32002 for what does not exist (the MCP spec's
// "resource not found"), -32602 for a malformed id, palace's -32010 otherwise; `data` carries the
// palace error {code, field}.

import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { McpError, type ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';

import { computeInbox } from '../../core/inbox.js';
import { HubError, RPC_HUB_FAULT, toHubError } from '../../errors.js';
import type { HubServices } from '../../services.js';

const JSON_TYPE = 'application/json';
/** How many recent events name the agents offered in lists and completions. */
const RECENT_EVENTS = 500;
const LISTED_TASKS = 20;
const MAX_COMPLETIONS = 100;

/** Runs a palace tool by name exactly as tools/call would (same lock, same validation) and returns its JSON. */
export type ToolCaller = (name: string, args: Record<string, unknown>) => Promise<unknown>;

/** An error of a resource read or prompt as a JSON-RPC error carrying the palace code. */
export function rpcErrorFor(err: unknown): McpError {
  if (err instanceof McpError) return err;
  const e = toHubError(err);
  const rpc = e.code.endsWith('not_found') ? -32002 : e.code === 'input.invalid' ? -32602 : RPC_HUB_FAULT;
  return new McpError(rpc, e.message, { code: e.code, ...(e.field ? { field: e.field } : {}) });
}

/** Agent names seen in the newest events (senders and recipients), most recent first. */
export function recentAgents(hub: HubServices): string[] {
  const seen = new Set<string>();
  for (const e of hub.logstream.list({ order: 'desc', limit: RECENT_EVENTS }).events)
    for (const name of [e.from_agent, e.to_agent]) if (name && name !== '*') seen.add(name);
  return [...seen];
}

/** Correlation ids of the newest tasks. */
export async function recentTasks(hub: HubServices, limit = MAX_COMPLETIONS): Promise<string[]> {
  const page = await hub.logstream.taskPage({ order: 'desc', limit });
  return page.tasks.map((t) => t.correlation_id);
}

/** Completion values: those starting with what was typed (case-insensitive), at most 100. */
export function matching(values: readonly string[], typed: string): string[] {
  const t = typed.toLowerCase();
  return values.filter((v) => v.toLowerCase().startsWith(t)).slice(0, MAX_COMPLETIONS);
}

function variable(vars: Record<string, string | string[]>, name: string): string {
  const v = vars[name];
  const s = Array.isArray(v) ? v[0] : v;
  if (s === undefined || s === '') throw new HubError('input.invalid', `the resource URI has no ${name}`, { field: name });
  return decodeURIComponent(s);
}

function json(uri: URL, value: unknown): ReadResourceResult {
  return { contents: [{ uri: uri.href, mimeType: JSON_TYPE, text: JSON.stringify(value) }] };
}

async function guarded(fn: () => Promise<ReadResourceResult> | ReadResourceResult): Promise<ReadResourceResult> {
  try {
    return await fn();
  } catch (err) {
    throw rpcErrorFor(err);
  }
}

export function registerResources(server: McpServer, hub: HubServices, call: ToolCaller): void {
  const agentsComplete = { agent: (typed: string) => matching(recentAgents(hub), typed) };
  const agentList = (prefix: string, name: (agent: string) => string) => () => ({
    resources: recentAgents(hub).map((agent) => ({ uri: `${prefix}${encodeURIComponent(agent)}`, name: name(agent), mimeType: JSON_TYPE })),
  });

  server.registerResource(
    'task',
    new ResourceTemplate('palace://task/{correlation_id}', {
      list: async () => ({
        resources: (await hub.logstream.taskPage({ order: 'desc', limit: LISTED_TASKS })).tasks.map((t) => ({
          uri: `palace://task/${encodeURIComponent(t.correlation_id)}`,
          name: `task ${t.correlation_id} (${t.status ?? 'no status'})`,
          mimeType: JSON_TYPE,
        })),
      }),
      complete: { correlation_id: async (typed) => matching(await recentTasks(hub), typed) },
    }),
    {
      title: 'Task',
      description: 'One task (correlation id): its current state (status, requester, worker, lease, artifacts) and every event of its history in order. Subscribe to be told when it changes.',
      mimeType: JSON_TYPE,
    },
    (uri, vars) =>
      guarded(() => {
        const id = variable(vars, 'correlation_id');
        return json(uri, { task: hub.logstream.task(id), events: hub.logstream.eventsOf(id) });
      }),
  );

  server.registerResource(
    'event',
    new ResourceTemplate('palace://event/{id}', { list: undefined }),
    { title: 'Event', description: 'One event of the log by id (events never change).', mimeType: JSON_TYPE },
    (uri, vars) =>
      guarded(() => {
        const id = variable(vars, 'id');
        const event = hub.logstream.store.getEvent(id);
        if (!event) throw new HubError('log.event_not_found', `no event '${id}'`, { field: 'id' });
        return json(uri, event);
      }),
  );

  server.registerResource(
    'artifact',
    new ResourceTemplate('palace://artifact/{id}', { list: undefined }),
    {
      title: 'Artifact',
      description: "An artifact's bytes (base64 blob) with their sha256 and size in _meta; check the sha256 before applying a patch.",
    },
    (uri, vars) =>
      guarded(() => {
        const { meta, bytes } = hub.logstream.getArtifactBytes(variable(vars, 'id'));
        const mimeType = meta.kind === 'patch' ? 'text/x-diff' : 'application/octet-stream';
        const about = { sha256: meta.sha256, size_bytes: meta.size_bytes, kind: meta.kind, created_by: meta.created_by, created_at: meta.created_at };
        return { contents: [{ uri: uri.href, mimeType, blob: bytes.toString('base64'), _meta: { 'palace/artifact': about } }], _meta: { 'palace/artifact': about } };
      }),
  );

  server.registerResource(
    'drawer',
    new ResourceTemplate('palace://drawer/{id}', { list: undefined }),
    { title: 'Drawer', description: 'One drawer of memory: verbatim content and provenance (as palace_get_drawer).', mimeType: JSON_TYPE },
    (uri, vars) => guarded(async () => json(uri, await call('palace_get_drawer', { drawer_id: variable(vars, 'id') }))),
  );

  server.registerResource(
    'inbox',
    new ResourceTemplate('palace://inbox/{agent}', { list: agentList('palace://inbox/', (a) => `inbox of ${a}`), complete: agentsComplete }),
    {
      title: 'Inbox',
      description:
        "What is new for an agent, as `palace hook inbox` computes it: new tasks for it, replies, acks and patches on its tasks, expired claims. Read palace://inbox/<agent> for a first look (its open tasks), then palace://inbox/<agent>?since_event_id=<the result's cursor> for what came after. Subscribe to palace://inbox/<agent> to be told when something new arrives.",
      mimeType: JSON_TYPE,
    },
    (uri, vars) =>
      guarded(async () => {
        // The SDK's template match makes a {?query} mandatory: the cursor is read from the URI itself.
        const agent = variable(vars, 'agent').split('?')[0] ?? '';
        const since = uri.searchParams.get('since_event_id');
        const result = await computeInbox((q) => Promise.resolve(hub.logstream.list(q)), agent, since === null ? undefined : since);
        return json(uri, { agent, since_event_id: since, ...result });
      }),
  );

  server.registerResource(
    'wake-up',
    new ResourceTemplate('palace://wake-up/{agent}', { list: agentList('palace://wake-up/', (a) => `wake-up for ${a}`), complete: agentsComplete }),
    {
      title: 'Wake-up',
      description: "Session start for an agent: palace_wakeup's overview (identity, wings and rooms, open tasks, decisions, the most important drawers) and the agent's inbox first look.",
      mimeType: JSON_TYPE,
    },
    (uri, vars) =>
      guarded(async () => {
        const agent = variable(vars, 'agent');
        const inbox = await computeInbox((q) => Promise.resolve(hub.logstream.list(q)), agent, undefined);
        return json(uri, { agent, wakeup: await call('palace_wakeup', {}), inbox: { text: inbox.text, items: inbox.items, cursor: inbox.cursor } });
      }),
  );
}
