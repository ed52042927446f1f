// palace_status: what this palace is and how the hub serving it is doing.

import { z } from 'zod';

import { toHubError } from '../../errors.js';
import { readEmbedderRecord } from '../../embed/select.js';
import type { HubServices } from '../../services.js';
import { defineTool } from './tool.js';

/** Memory counts when memory is loaded (or asked for); otherwise what the palace records, cheaply. */
async function memoryStatus(hub: HubServices, load: boolean): Promise<Record<string, unknown>> {
  try {
    if (!hub.memory.isOpen() && !load)
      return { loaded: false, embedder_record: readEmbedderRecord(hub.config.palacePath) ?? null, hint: 'pass include_memory: true for counts' };
    const memory = await hub.memory.get();
    return {
      loaded: true,
      ...(await memory.counts()),
      embedder: memory.embedderInfo(),
      // Worker threads embedding for this palace: size, and each live worker's state, batches and own memory.
      embed_workers: memory.embedWorkers(),
      backend: hub.config.backend,
    };
  } catch (err) {
    return { loaded: false, error: toHubError(err).toJSON() };
  }
}

function replicationStatus(hub: HubServices): Record<string, unknown> | null {
  if (!hub.memorySync) return null;
  try {
    const progress = hub.memory.peek()?.replicator?.progress;
    return { ...hub.memorySync.status(), reembedding: progress ? { ...progress } : null };
  } catch (err) {
    return { error: toHubError(err).toJSON() };
  }
}

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
  handler: async (args, hub) => {
    // Counted in the task projection table; a cold projection is first built in slices.
    const tasks = await hub.logstream.taskCounts();
    return {
      palace_path: hub.config.palacePath,
      version: hub.version,
      role: hub.role,
      read_only: hub.readOnly,
      uptime_seconds: Math.round((Date.now() - hub.startedAt.getTime()) / 1000),
      logstream: {
        replica_id: hub.logstream.replicaId,
        events: hub.logstream.store.countEvents(),
        latest_event_id: hub.logstream.tipId(),
        open_tasks: tasks.active,
        tasks: tasks.all,
        tasks_by_status: tasks.by_status,
      },
      memory: await memoryStatus(hub, args.include_memory === true),
      // Memory replication: the wings shared with each peer (peers.json "wings"), the feeds held, re-embedding progress.
      replication: replicationStatus(hub),
      // open (unregistered names believed) or enforced, and how many agents hold a secret (docs/identity.md).
      identity: hub.identity.describe(),
      ...hub.describe(),
    };
  },
});
