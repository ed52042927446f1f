// Request counters and the recently seen MCP clients shown by /statusz. In memory, bounded: at most
// REQUEST_STATS_LIMITS.clients clients, every string kept truncated (a request's own data can be MBs).
// Also the admission count of concurrent long-polls (WaitGate).

import { HubError } from './errors.js';

export interface ClientRecord {
  client_id: string;
  /** The client's clientInfo name, when exactly one client initialized on this key; null otherwise. */
  name: string | null;
  version: string | null;
  /** Every clientInfo name seen on this key (remote address + User-Agent), first first; at most 8. */
  names: string[];
  user_agent: string | null;
  remote: string | null;
  first_seen: string;
  last_seen: string;
  requests: number;
  last_method: string | null;
}

/** What /statusz keeps per client, and for how many clients. */
export const REQUEST_STATS_LIMITS = { clients: 50, methodChars: 128, userAgentChars: 160 } as const;

const MAX_CLIENTS = REQUEST_STATS_LIMITS.clients;

/**
 * `text` cut to at most `max` characters (the last one an ellipsis when cut); null stays null. The cut
 * is copied through a Buffer: a plain slice() can be a V8 sliced string that keeps the whole request
 * string alive, and a cut surrogate pair becomes U+FFFD.
 */
function clip(text: string | null, max: number): string | null {
  if (text === null || text.length <= max) return text;
  return `${Buffer.from(text.slice(0, max - 1), 'utf8').toString('utf8')}…`;
}

/**
 * Concurrent palace_event_wait calls: each holds a request, a socket and an MCP server until it ends,
 * so past the cap (PALACE_WAIT_MAX_CONCURRENT) a wait is refused at once with the retryable http.busy.
 */
export class WaitGate {
  active = 0;
  refused = 0;

  /** The refusal when `max` waits are already running (counted as refused), else undefined. */
  refusal(max: number): HubError | undefined {
    if (this.active < max) return undefined;
    this.refused++;
    return new HubError(
      'http.busy',
      `too many concurrent palace_event_wait calls (PALACE_WAIT_MAX_CONCURRENT=${max}); retry in a second, or poll with palace_event_list`,
      { data: { retry_after_ms: 1_000 } },
    );
  }

  /** Admits one wait or throws http.busy; returns the function that ends it (idempotent). */
  enter(max: number): () => void {
    const refused = this.refusal(max);
    if (refused) throw refused;
    this.active++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.active--;
    };
  }
}

export class RequestStats {
  readonly waits = new WaitGate();
  total = 0;
  mcpRequests = 0;
  readonly byStatus: Record<string, number> = {};
  private readonly clients = new Map<string, ClientRecord>();
  lastMcpAt: number;

  constructor(now: number = Date.now()) {
    this.lastMcpAt = now;
  }

  countResponse(status: number): void {
    this.total++;
    this.byStatus[String(status)] = (this.byStatus[String(status)] ?? 0) + 1;
  }

  /** Records an MCP request; `clientInfo` comes from initialize when the client sends it. */
  seeMcp(
    key: { userAgent: string | null; remote: string | null },
    method: string | null,
    clientInfo?: { name?: unknown; version?: unknown },
    now = new Date(),
  ): void {
    this.mcpRequests++;
    this.lastMcpAt = now.getTime();
    const userAgent = clip(key.userAgent, REQUEST_STATS_LIMITS.userAgentChars);
    const remote = clip(key.remote, 64);
    const id = `${remote ?? '?'}|${userAgent ?? '?'}`;
    const at = now.toISOString();
    let record = this.clients.get(id);
    if (!record) {
      record = {
        client_id: id,
        name: null,
        version: null,
        names: [],
        user_agent: userAgent,
        remote,
        first_seen: at,
        last_seen: at,
        requests: 0,
        last_method: null,
      };
      this.clients.set(id, record);
      if (this.clients.size > MAX_CLIENTS) {
        const oldest = [...this.clients.values()].sort((a, b) => a.last_seen.localeCompare(b.last_seen))[0];
        if (oldest) this.clients.delete(oldest.client_id);
      }
    }
    record.requests++;
    record.last_seen = at;
    record.last_method = clip(method, REQUEST_STATS_LIMITS.methodChars);
    if (typeof clientInfo?.name === 'string') {
      // Requests carry no client identity after initialize (stateless MCP): the key (remote address +
      // User-Agent) is all there is. A second client initializing on the same key never renames the
      // first one's requests: the record then lists both names and claims none.
      const name = clip(clientInfo.name, 100) as string;
      if (!record.names.includes(name) && record.names.length < 8) record.names.push(name);
      const single = record.names.length === 1;
      record.name = single ? name : null;
      record.version = single && typeof clientInfo.version === 'string' ? clip(clientInfo.version, 50) : null;
    }
  }

  recentClients(): ClientRecord[] {
    return [...this.clients.values()].sort((a, b) => b.last_seen.localeCompare(a.last_seen));
  }
}
