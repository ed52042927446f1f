// THE tool registry: every MCP tool palace serves, in one list. Transports never hold tool logic.

import { coordinationTools } from './coordination-tools.js';
import { curationTools } from './curation-tools.js';
import { diaryTools } from './diary-tools.js';
import { identityTools } from './identity-tools.js';
import { kgTools } from './kg-tools.js';
import { logstreamTools } from './logstream-tools.js';
import { memoryTools } from './memory-tools.js';
import { meshPeersTool } from './mesh-tools.js';
import { palaceTools } from './palace-tools.js';
import { mineTools } from './mine-tools.js';
import { navigationTools } from './navigation-tools.js';
import { statusTool } from './status-tool.js';
import type { ToolDef } from './tool.js';

// Each tool keeps its own argument type; the registry only needs the common surface.
export const TOOLS: readonly ToolDef[] = [...logstreamTools, ...coordinationTools, ...identityTools, ...memoryTools, ...mineTools, statusTool, meshPeersTool, ...kgTools, ...diaryTools, ...palaceTools, ...curationTools, ...navigationTools] as unknown as readonly ToolDef[];

/** Names of tools that change state: hidden and refused on a read-only hub. */
export const MUTATING_TOOLS: ReadonlySet<string> = new Set(TOOLS.filter((t) => t.mutating).map((t) => t.name));

export function findTool(name: string): ToolDef | undefined {
  return TOOLS.find((t) => t.name === name);
}
