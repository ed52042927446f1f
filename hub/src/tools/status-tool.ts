// palace_status: what this palace is and how the hub serving it is doing.

import { defineTool } from './tool.js';

export const statusTool = defineTool({
  name: 'palace_status',
  title: 'Palace status',
  description:
    'Where the palace lives, the hub version and mode (read-only or writer), the log size and open tasks. Call it first when something looks wrong.',
  input: {},
  mutating: false,
  lockFree: true,
  handler: (_args, hub) => {
    const tasks = hub.logstream.tasks();
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
        open_tasks: tasks.filter((t) => !t.done).length,
        tasks: tasks.length,
      },
      ...hub.describe(),
    };
  },
});
