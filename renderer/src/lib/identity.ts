// Which writes the dashboard can call proven (docs/identity.md): an event under a name registered
// before it was written was made with that agent's secret (the hub refuses the name otherwise);
// an event under any other name (but the hub's own) was believed on an open hub. Pure.

import type { LogEvent } from '../../../hub/src/core/types.js';

/** A registered agent as palace_agents lists it. */
export interface RegisteredAgent {
  name: string;
  capabilities: string[];
  harness: string | null;
  created_at: string;
  state: 'active' | 'revoked' | 'retired';
}

export interface AgentsInfo {
  mode: 'open' | 'enforced';
  agents: RegisteredAgent[];
}

/** `proven` (a registered name, written after it was registered), `hub` (the hub's own), else `unproven`. */
export function writerProof(event: Pick<LogEvent, 'from_agent' | 'created_at'>, agents: readonly RegisteredAgent[]): 'proven' | 'hub' | 'unproven' {
  if (event.from_agent === 'hub') return 'hub';
  const agent = agents.find((a) => a.name === event.from_agent);
  return agent && Date.parse(event.created_at) >= Math.floor(Date.parse(agent.created_at) / 1000) * 1000 ? 'proven' : 'unproven';
}
