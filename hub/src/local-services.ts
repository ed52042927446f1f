// Kept for callers written before the composition root: the services of a process answering tools
// itself (no hub) are openPalace(config, { role: 'local' }) (palace.ts); this only adapts the shape.

import type { PalaceConfig } from './config.js';
import type { Logger } from './log.js';
import { openPalace } from './palace.js';
import type { HubServices } from './services.js';

export interface LocalServices {
  services: HubServices;
  close(): Promise<void>;
}

/** @deprecated use openPalace(config, { role: 'local', log }); `palacePath` must be config.palacePath. */
export function createLocalServices(config: Readonly<PalaceConfig>, palacePath: string, log: Logger): LocalServices {
  const palace = openPalace({ ...config, palacePath }, { role: 'local', log });
  return { services: palace.services, close: () => palace.close() };
}
