// The services a running hub (or a local stdio server) hands to tools and routes. Built once by the
// wiring code; nothing here opens files itself.

import type { PalaceConfig } from './config.js';
import type { Logger } from './log.js';
import type { Logstream } from './logstream/logstream.js';
import type { RequestStats } from './http/request-stats.js';

export interface HubServices {
  config: Readonly<PalaceConfig>;
  logstream: Logstream;
  log: Logger;
  version: string;
  startedAt: Date;
  readOnly: boolean;
  /** 'hub' for the HTTP hub, 'local' for a stdio server answering without a hub. */
  role: 'hub' | 'local';
  stats: RequestStats;
  /** Extra status blocks (writer lease, listen address) filled in by the wiring code. */
  describe(): Record<string, unknown>;
}
