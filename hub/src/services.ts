// The services a running hub (or a local stdio server) hands to tools and routes. Built once by
// openPalace() (palace.ts), the composition root; nothing here opens files itself.

import type { PalaceConfig } from './config.js';
import type { IdentityService } from './identity/identity.js';
import type { Logger } from './log.js';
import type { Logstream } from './logstream/logstream.js';
import type { ResourceWatch } from './logstream/resource-watch.js';
import type { ServiceDescription } from './status.js';
import type { KgHandle } from './kg/knowledge-graph.js';
import type { CypherService } from './kg/cypher-service.js';
import type { MemoryHandle } from './memory/drawers/open-memory.js';
import type { MineJobs } from './mine/jobs.js';
import type { RequestStats } from './request-stats.js';
import type { SyncService } from './sync/sync-service.js';
import type { MemorySync } from './sync/memory-sync.js';

export interface HubServices {
  config: Readonly<PalaceConfig>;
  logstream: Logstream;
  /** The palace memory, opened on first use. */
  memory: MemoryHandle;
  /** The palace's knowledge graph (knowledge_graph.sqlite3), opened on first use. */
  kg: KgHandle;
  log: Logger;
  version: string;
  startedAt: Date;
  readOnly: boolean;
  /** 'hub' for the HTTP hub, 'local' for a stdio server answering without a hub. */
  role: 'hub' | 'local';
  /** The HTTP hub listens on a non-loopback address (palace_mine then reads only configured roots). */
  networkExposed?: boolean;
  stats: RequestStats;
  /** Who callers are and what names they may write under (identity/identity.ts; docs/identity.md). */
  identity: IdentityService;
  /** Background mines queued by palace_mine {background: true} (listed by palace_mined in a hub). */
  mineJobs: MineJobs;
  /** Read-only Cypher over the knowledge graph mirrored into Apache AGE (one Postgres pool, opened on first use). */
  cypher(): CypherService;
  /** Peer sync and the mesh estate (the HTTP hub only; absent in a local stdio server). */
  sync?: SyncService;
  /** Memory replication of shared wings (peers.json "wings"; docs/memory-replication.md). */
  memorySync?: MemorySync;
  /** Subscribed MCP resources (tasks, inboxes): turns commits into resources/updated (issue 33). */
  resourceWatch: ResourceWatch;
  /** Extra status blocks: the writer lease and listen address of a hub, or the local mode (status.ts). */
  describe(): ServiceDescription;
}
