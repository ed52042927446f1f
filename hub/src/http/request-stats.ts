// Request counters and the recently seen MCP clients shown by /statusz. In memory, bounded.

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

const MAX_CLIENTS = 50;

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
    const id = `${key.remote ?? '?'}|${key.userAgent ?? '?'}`;
    const at = now.toISOString();
    let record = this.clients.get(id);
    if (!record) {
      record = {
        client_id: id,
        name: null,
        version: null,
        user_agent: key.userAgent?.slice(0, 160) ?? null,
        remote: key.remote,
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
    record.last_method = method;
    if (typeof clientInfo?.name === 'string') record.name = clientInfo.name.slice(0, 100);
    if (typeof clientInfo?.version === 'string') record.version = clientInfo.version.slice(0, 50);
  }

  recentClients(): ClientRecord[] {
    return [...this.clients.values()].sort((a, b) => b.last_seen.localeCompare(a.last_seen));
  }
}
