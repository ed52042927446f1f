// The one watcher of subscribed resources (issue 33): on each commit it reads the new events once and
// tells each subscriber which of its task and inbox resources changed (core/inbox.ts decides what is
// an inbox item, as `palace hook inbox` does). Subscribers are MCP sessions (mcp/server/session.ts):
// the HTTP hub's GET stream, the stdio server. One per palace, built by palace.ts.

import type { ServerNotification } from '@modelcontextprotocol/sdk/types.js';

import { inboxAddressed } from '../core/inbox.js';
import type { LogEvent } from '../core/types.js';
import type { Logger } from '../log.js';
import type { Logstream } from './logstream.js';

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

/** Who is told: the URIs it subscribed to, and its channel (false when none is open). */
export interface Subscriber {
  readonly subscriptions: Set<string>;
  notify(notification: ServerNotification): boolean;
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
  private readonly sessions = new Set<Subscriber>();
  private unsubscribe: (() => void) | undefined;
  private cursor: string | null = null;
  private running = false;
  private again = false;
  /** Set by the benchmark: called after each notification is handed to a session's channel. */
  onPush: ((timing: PushTiming) => void) | undefined;

  constructor(
    private readonly logstream: Logstream,
    private readonly log: Logger,
  ) {}

  /** Starts watching for `session` (its subscriptions are read at each commit). */
  attach(session: Subscriber): void {
    this.sessions.add(session);
    if (!this.unsubscribe) {
      this.cursor = this.logstream.tipId();
      this.unsubscribe = this.logstream.onChange(() => this.changed());
    }
  }

  detach(session: Subscriber): void {
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
      this.log.warn('resource subscriptions: reading the log failed', { message: (err as Error).message });
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
      const page = this.logstream.list({ since_event_id: this.cursor, limit: PAGE });
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
          task ??= this.logstream.task(e.correlation_id);
        } catch {
          continue;
        }
        if (task.requester !== agent && task.worker !== agent) continue;
      }
      changed.add(inboxUri(agent));
    }
  }
}
