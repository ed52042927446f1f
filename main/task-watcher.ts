// Watches the hub for task.request events addressed to this machine's agents: counts the ones
// nobody has claimed (the tray shows it) and reports each new one once (the tray notifies), and
// each new patch.ready on a task one of them requested (the human at the desk, issue #20). Plain
// Node over the hub's HTTP API; loads history without notifying, then follows the live feed.

import { createEventFeed, type EventFeed, type FeedMode } from '../hub/src/client/event-feed.js';
import type { HubClient } from '../hub/src/client/hub-client.js';
import { projectTasks } from '../hub/src/core/task-state.js';
import type { LogEvent } from '../hub/src/core/types.js';

const TASK_TYPES = ['task.request', 'task.reply', 'patch.ready', 'event.ack'];
const HISTORY_PAGES = 20;
const NOTIFIED_CAP = 2_000;

export interface TaskWatcherOptions {
  isLocalAgent(name: string | null): boolean;
  /** A new task.request for one of this machine's agents (never called for history). */
  onRequest(event: LogEvent): void;
  /** A new patch.ready on a task whose request one of this machine's agents wrote (never for history). */
  onPatch?(event: LogEvent): void;
  /** Open task.requests for this machine's agents that nobody has claimed. */
  onWaiting(count: number): void;
  onMode?(mode: FeedMode): void;
  /** Feed tuning (tests shorten the retry). */
  retryMs?: { initial: number; max: number };
}

export class TaskWatcher {
  private feed: EventFeed | undefined;
  private events = new Map<string, LogEvent>();
  private readonly notified = new Set<string>();
  private waiting = -1;
  private generation = 0;

  constructor(private readonly options: TaskWatcherOptions) {}

  /** (Re)starts against a hub: reloads the task history, then follows new events. */
  async start(client: HubClient): Promise<void> {
    this.stop();
    const gen = ++this.generation;
    void client.hello('palace-tray', '1').catch(() => undefined);
    const history: LogEvent[] = [];
    let before: string | undefined;
    try {
      for (let i = 0; i < HISTORY_PAGES; i++) {
        const page = await client.call('palace_event_list', {
          type: TASK_TYPES,
          order: 'desc',
          limit: 500,
          ...(before ? { before_event_id: before } : {}),
        });
        history.push(...page.events);
        before = page.events.at(-1)?.id;
        if (!page.has_more || !before) break;
      }
    } catch {
      // the feed below retries the hub; history comes back with the next start()
    }
    if (gen !== this.generation) return;
    this.events = new Map(history.map((e) => [e.id, e]));
    for (const e of history) this.notified.add(e.id);
    this.recount();
    this.feed = createEventFeed({
      client,
      cursor: history[0]?.id ?? null,
      query: { type: TASK_TYPES },
      ...(this.options.retryMs ? { retryMs: this.options.retryMs } : {}),
      onPage: (page) => {
        if (gen === this.generation) this.take(page.events);
      },
      onMode: (mode) => this.options.onMode?.(mode),
    });
    this.feed.start();
  }

  stop(): void {
    this.generation++;
    this.feed?.stop();
    this.feed = undefined;
  }

  private take(events: readonly LogEvent[]): void {
    for (const e of events) {
      this.events.set(e.id, e);
      if (e.type === 'task.request' && this.options.isLocalAgent(e.to_agent) && !this.notified.has(e.id)) {
        this.notified.add(e.id);
        this.options.onRequest(e);
      }
      if (
        e.type === 'patch.ready' &&
        this.options.onPatch &&
        !this.notified.has(e.id) &&
        this.requestedLocally(e.correlation_id)
      ) {
        this.notified.add(e.id);
        this.options.onPatch(e);
      }
    }
    if (this.notified.size > NOTIFIED_CAP)
      for (const id of [...this.notified].slice(0, this.notified.size - NOTIFIED_CAP))
        this.notified.delete(id);
    this.recount();
  }

  private requestedLocally(correlationId: string | null): boolean {
    if (!correlationId) return false;
    for (const e of this.events.values())
      if (e.type === 'task.request' && e.correlation_id === correlationId)
        return this.options.isLocalAgent(e.from_agent);
    return false;
  }

  private recount(): void {
    const ordered = [...this.events.values()].sort((a, b) => a.seq - b.seq);
    const byId = new Map(ordered.map((e) => [e.id, e]));
    const count = projectTasks(ordered).filter((t) => {
      const request = t.request_event_id ? byId.get(t.request_event_id) : undefined;
      return t.status === 'open' && request !== undefined && this.options.isLocalAgent(request.to_agent);
    }).length;
    if (count !== this.waiting) {
      this.waiting = count;
      this.options.onWaiting(count);
    }
  }
}
