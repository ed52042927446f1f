// Request counters and the recently seen MCP clients shown by /statusz. In memory, bounded: at most
// REQUEST_STATS_LIMITS.clients clients, every string kept truncated (a request's own data can be MBs).

export interface ClientRecord {
  client_id: string;
  name: string | null;
  version: string | null;
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

export class RequestStats {
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
    if (typeof clientInfo?.name === 'string') record.name = clip(clientInfo.name, 100);
    if (typeof clientInfo?.version === 'string') record.version = clip(clientInfo.version, 50);
  }

  recentClients(): ClientRecord[] {
    return [...this.clients.values()].sort((a, b) => b.last_seen.localeCompare(a.last_seen));
  }
}
