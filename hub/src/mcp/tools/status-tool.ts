// palace_status: what this palace is and how the hub serving it is doing.

import { z } from 'zod';

import { palaceStatus } from '../../status.js';
import { defineTool } from './tool.js';

export const statusTool = defineTool({
  name: 'palace_status',
  title: 'Palace status',
  description:
    'Where the palace lives, the hub version and mode (read-only or writer), the log size and open tasks, and memory counts (drawers, wings, rooms) with the embedder in use. Call it first when something looks wrong.',
  input: {
    include_memory: z.boolean().optional().describe('Load memory (and its embedder) if not loaded yet, to report counts'),
  },
  mutating: false,
  lockFree: true,
  // Built in one place with /statusz (status.ts).
  handler: (args, hub) => palaceStatus(hub, { includeMemory: args.include_memory }),
});
