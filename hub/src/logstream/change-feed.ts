// Wakes waiters when the log changes: at once for appends made through this process, and by a
// cheap poll of the store's change token (PRAGMA data_version) for appends made by other processes.

export interface ChangeFeedOptions {
  /** Reads a number that changes whenever anyone commits to the log. */
  changeToken: () => number;
  /** How often to look for other processes' commits while someone is waiting. */
  pollMs?: number;
}

/** Fan-out of "the log changed" signals. Polls only while at least one listener is subscribed. */
export class ChangeFeed {
  private readonly listeners = new Set<() => void>();
  private readonly changeToken: () => number;
  private readonly pollMs: number;
  private timer: NodeJS.Timeout | undefined;
  private lastToken = 0;

  constructor(options: ChangeFeedOptions) {
    this.changeToken = options.changeToken;
    this.pollMs = options.pollMs ?? 50;
  }

  /** Registers a listener; returns its unsubscribe function. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    if (!this.timer) {
      this.lastToken = this.changeToken();
      this.timer = setInterval(() => this.poll(), this.pollMs);
      this.timer.unref();
    }
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0 && this.timer) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    };
  }

  /** Signals a change made by this process. */
  notify(): void {
    if (this.listeners.size === 0) return;
    this.lastToken = this.changeToken();
    for (const listener of [...this.listeners]) listener();
  }

  private poll(): void {
    let token: number;
    try {
      token = this.changeToken();
    } catch {
      return; // the store is closing; the next subscriber restarts polling
    }
    if (token === this.lastToken) return;
    this.lastToken = token;
    for (const listener of [...this.listeners]) listener();
  }

  get size(): number {
    return this.listeners.size;
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.listeners.clear();
  }
}
