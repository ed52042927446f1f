// The services of a process that answers tools itself, without a hub (`palace mcp` with no hub, the
// CLI when none is live): the same logstream, memory and knowledge-graph handles, closed together.

import type { PalaceConfig } from './config.js';
import { RequestStats } from './request-stats.js';
import type { Logger } from './log.js';
import { Logstream } from './logstream/logstream.js';
import { createKgHandle } from './memory/kg/knowledge-graph.js';
import { createMemoryHandle } from './memory/open-memory.js';
import { MineJobs } from './mine/jobs.js';
import type { HubServices } from './services.js';
import { PALACE_VERSION } from './version.js';

export interface LocalServices {
  services: HubServices;
  close(): Promise<void>;
}

export function createLocalServices(config: Readonly<PalaceConfig>, palacePath: string, log: Logger): LocalServices {
  const logstream = Logstream.open(palacePath, { durability: config.durability, maxSkewMs: config.syncMaxSkewMs });
  const memory = createMemoryHandle(config, palacePath, log);
  const kg = createKgHandle(palacePath);
  const services: HubServices = {
    config,
    logstream,
    memory,
    kg,
    log,
    version: PALACE_VERSION,
    startedAt: new Date(),
    readOnly: false,
    role: 'local',
    stats: new RequestStats(),
    mineJobs: new MineJobs(log),
    describe: () => ({ writer: { mode: 'local' } }),
  };
  return {
    services,
    async close() {
      await memory.close();
      kg.close();
      logstream.close();
    },
  };
}
