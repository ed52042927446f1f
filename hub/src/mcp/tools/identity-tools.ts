// The identity tools: the registered agents (names, capabilities, harness, state; never secrets) and
// retiring an agent. Registering, rotating and revoking secrets is `palace agent` on the hub's machine:
// a secret is shown once, on a terminal, never through MCP.

import { z } from 'zod';

import { HubError } from '../../errors.js';
import { DESK_NAME } from '../../identity/names.js';
import { retireAgent } from '../../identity/retire.js';
import { defineTool } from './tool.js';

export const agentsTool = defineTool({
  name: 'palace_agents',
  title: 'List registered agents',
  description:
    "The agents registered on this palace (palace agent add): name, capabilities, harness, state (active, revoked, retired) and the hub's identity mode (open: unregistered names are believed; enforced: only registered agents write). Never returns secrets. Returns {mode, agents, you}.",
  input: {},
  mutating: false,
  lockFree: true,
  handler: (_args, hub, ctx) => ({
    mode: hub.identity.mode,
    agents: hub.identity.registry.list(),
    you: ctx.caller.kind === 'agent' ? ctx.caller.name : ctx.caller.kind,
  }),
});

export const agentRetireTool = defineTool({
  name: 'palace_agent_retire',
  title: 'Retire an agent',
  description:
    'Retire a registered agent (crashed or gone): releases its live claims (the tasks are open again) and its file reservations, revokes its secret for good, and appends agent.retired naming who retired it. For the human at the desk or the operator; an agent may retire only itself.',
  input: {
    name: z.string().describe('The agent to retire'),
    from_agent: z.string().optional().describe(`Who retires it (default ${DESK_NAME})`),
    reason: z.string().optional().describe('Why (kept in the event and the released claims)'),
  },
  mutating: true,
  lockFree: true,
  handler: (args, hub, ctx) => {
    if (ctx.caller.kind === 'agent' && ctx.caller.name !== args.name)
      throw new HubError('identity.forbidden', `${ctx.caller.name} may not retire ${args.name}: only the desk, the operator or the agent itself may`, { field: 'name' });
    return retireAgent(hub.logstream, hub.identity.registry, args.name, args.from_agent ?? DESK_NAME, args.reason);
  },
});

export const identityTools = [agentsTool, agentRetireTool];
