// mcp/tools/tool-groups.ts: the name -> module table the CLI's in-process road loads one tool by must name
// every tool of the registry, each in the module that defines it, and nothing else.

import { describe, expect, it } from 'vitest';

import { TOOLS } from '../../hub/src/mcp/tools/registry.js';
import { loadTools, TOOL_GROUP_OF, TOOL_GROUPS, type ToolGroup } from '../../hub/src/mcp/tools/tool-groups.js';

describe('tool groups', () => {
  it('names every registry tool once, each in the group whose module defines it', async () => {
    expect(Object.keys(TOOL_GROUP_OF).sort()).toEqual(TOOLS.map((t) => t.name).sort());
    for (const [group, load] of Object.entries(TOOL_GROUPS) as [ToolGroup, () => Promise<readonly { name: string }[]>][]) {
      const names = (await load()).map((t) => t.name);
      expect(names.length, group).toBeGreaterThan(0);
      for (const name of names) expect((TOOL_GROUP_OF as Record<string, ToolGroup>)[name], name).toBe(group);
    }
  });

  it('loads exactly the named tools, the same definitions the registry serves', async () => {
    const tools = await loadTools(['palace_event_list', 'palace_reserve', 'no_such_tool']);
    expect(tools.map((t) => t.name).sort()).toEqual(['palace_event_list', 'palace_reserve']);
    for (const tool of tools) expect(tool).toBe(TOOLS.find((t) => t.name === tool.name));
    expect(await loadTools([])).toEqual([]);
  });
});
