// What an MCP session holds beyond one request, and the one watcher that turns log commits into
// `notifications/resources/updated`. A session is whatever carries notifications to one client: the
// HTTP hub's GET stream (http/routes/mcp-sessions.ts), the long-lived stdio server, or nothing (the
// CLI's in-process road, a client that never initialized). The watcher is one per hub: on each commit
// it reads the new events once and tells each session which of its subscribed task and inbox
// resources changed (core/inbox.ts decides what is an inbox item, as `palace hook inbox` does).

import type { LoggingLevel, ServerNotification } from '@modelcontextprotocol/sdk/types.js';

import { inboxAddressed } from '../core/inbox.js';
import type { LogEvent } from '../core/types.js';
import { findSecret } from '../core/secrets.js';
import { redact } from '../log.js';
import type { HubServices } from '../services.js';

export interface McpSession {
  readonly id: string;
  /** Resource URIs this client subscribed to (resources/subscribe). */
  readonly subscriptions: Set<string>;
  /** The level logging/setLevel chose; undefined: no log messages are sent. */
  logLevel: LoggingLevel | undefined;
  /** Sends a notification outside any request; false when the session has no open channel. */
  notify(notification: ServerNotification): boolean;
}

export const TASK_URI = 'palace://task/';
export const INBOX_URI = 'palace://inbox/';

export function taskUri(correlationId: string): string {
  return `${TASK_URI}${encodeURIComponent(correlationId)}`;
}
export function inboxUri(agent: string): string {
  return `${INBOX_URI}${encodeURIComponent(agent)}`;
}

/** Whether `uri` is a resource whose content changes (a task or an inbox), so it can be subscribed. */
export function subscribable(uri: string): boolean {
  return (uri.startsWith(TASK_URI) || uri.startsWith(INBOX_URI)) && !uri.includes('?') && uri.length > TASK_URI.length;
}

const LEVELS: readonly LoggingLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

/** Whether a message at `level` passes the session's chosen level. */
export function logPasses(session: McpSession | undefined, level: LoggingLevel): boolean {
  if (!session?.logLevel) return false;
  return LEVELS.indexOf(level) >= LEVELS.indexOf(session.logLevel);
}

/**
 * Log data as a client may see it: secret-looking keys masked (log.ts redact) and any string that
 * looks like a credential (core/secrets.ts) replaced, at any depth. Callers send codes, names and
 * counts, never arguments or bodies; this is the second line.
 */
export function scrubLogData(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return findSecret(value) ? '[redacted: looks like a credential]' : value;
  if (depth > 4 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => scrubLogData(v, depth + 1));
  const masked = redact(value as Record<string, unknown>);
  return Object.fromEntries(Object.entries(masked).map(([k, v]) => [k, scrubLogData(v, depth + 1)]));
}

/** Sends a log message to the session when its level lets it through. */
export function sendLog(session: McpSession | undefined, level: LoggingLevel, data: Record<string, unknown>): void {
  if (!logPasses(session, level)) return;
  session?.notify({ method: 'notifications/message', params: { level, logger: 'palace', data: scrubLogData(data) } });
}

/** Timing of one push, for the benchmark: when the commit was seen and when the notification left. */
export interface PushTiming {
  uri: string;
  seenAt: number;
  sentAt: number;
}

const PAGE = 200;

/** The hub's one watcher of subscribed resources. */
export class ResourceWatch {
  private readonly sessions = new Set<McpSession>();
  private unsubscribe: (() => void) | undefined;
  private cursor: string | null = null;
  private running = false;
  private again = false;
  /** Set by the benchmark: called after each notification is handed to a session's channel. */
  onPush: ((timing: PushTiming) => void) | undefined;

  constructor(private readonly hub: HubServices) {}

  /** Starts watching for `session` (its subscriptions are read at each commit). */
  attach(session: McpSession): void {
    this.sessions.add(session);
    if (!this.unsubscribe) {
      this.cursor = this.hub.logstream.tipId();
      this.unsubscribe = this.hub.logstream.onChange(() => this.changed());
    }
  }

  detach(session: McpSession): void {
    this.sessions.delete(session);
    if (this.sessions.size === 0 && this.unsubscribe) {
      this.unsubscribe();
      this.unsubscribe = undefined;
    }
  }

  get size(): number {
    return this.sessions.size;
  }

  private changed(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    try {
      do {
        this.again = false;
        this.scan();
      } while (this.again);
    } catch (err) {
      this.hub.log.warn('resource subscriptions: reading the log failed', { message: (err as Error).message });
    } finally {
      this.running = false;
    }
  }

  private scan(): void {
    const seenAt = performance.now();
    const agents = new Set<string>();
    const tasks = new Set<string>();
    for (const session of this.sessions)
      for (const uri of session.subscriptions) {
        if (uri.startsWith(INBOX_URI)) agents.add(decodeURIComponent(uri.slice(INBOX_URI.length)));
        else if (uri.startsWith(TASK_URI)) tasks.add(decodeURIComponent(uri.slice(TASK_URI.length)));
      }
    const changed = new Set<string>();
    for (;;) {
      const page = this.hub.logstream.list({ since_event_id: this.cursor, limit: PAGE });
      for (const e of page.events) this.match(e, agents, tasks, changed);
      this.cursor = page.cursor ?? this.cursor;
      if (!page.has_more) break;
    }
    if (changed.size === 0) return;
    for (const session of this.sessions)
      for (const uri of changed)
        if (session.subscriptions.has(uri)) {
          const sent = session.notify({ method: 'notifications/resources/updated', params: { uri } });
          if (sent) this.onPush?.({ uri, seenAt, sentAt: performance.now() });
        }
  }

  private match(e: LogEvent, agents: ReadonlySet<string>, tasks: ReadonlySet<string>, changed: Set<string>): void {
    if (e.correlation_id !== null && tasks.has(e.correlation_id)) changed.add(taskUri(e.correlation_id));
    let task: { requester: string | null; worker: string | null } | undefined;
    for (const agent of agents) {
      const verdict = inboxAddressed(e, agent);
      if (verdict === false) continue;
      if (verdict === 'task') {
        try {
          task ??= this.hub.logstream.task(e.correlation_id);
        } catch {
          continue;
        }
        if (task.requester !== agent && task.worker !== agent) continue;
      }
      changed.add(inboxUri(agent));
    }
  }
}

const watches = new WeakMap<HubServices, ResourceWatch>();

/** The hub's resource watcher (one per HubServices). */
export function resourceWatch(hub: HubServices): ResourceWatch {
  let watch = watches.get(hub);
  if (!watch) {
    watch = new ResourceWatch(hub);
    watches.set(hub, watch);
  }
  return watch;
}
