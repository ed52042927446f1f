// `palace agent add|list|rotate|revoke|retire`: per-agent credentials (docs/identity.md). add and
// rotate print the new secret once (to stdout; `--json` puts it in the result) and store only its
// sha256 in the palace's agents.json (0600); retire goes through the hub (or the palace in-process)
// so the agent's claims and reservations are released by ordinary events.

import type { Command } from 'commander';

import { createAgentRegistry, type AgentInfo } from '../../hub/src/identity/agent-registry.js';
import { action, type CommandContext } from '../context.js';
import { runTool } from '../tool-runner.js';

function registry(ctx: CommandContext): ReturnType<typeof createAgentRegistry> {
  return createAgentRegistry(ctx.config.palacePath);
}

function line(a: AgentInfo): string {
  return `${a.name}  ${a.state}  can: ${a.capabilities.join(',') || '-'}  harness: ${a.harness ?? '-'}  since ${a.created_at}${a.retired_by ? `  retired by ${a.retired_by}` : ''}`;
}

function secretText(name: string, secret: string, what: string): string {
  return [
    `${what} ${name}. Its secret (shown once; palace stores only its sha256):`,
    '',
    `  ${secret}`,
    '',
    `Give it to that agent only, in its environment: PALACE_AGENT_TOKEN=<secret> (palace mcp and the CLI send it),`,
    `or over HTTP as "Authorization: Bearer <secret>" (or X-Palace-Agent-Token). Never put it on a command line.`,
  ].join('\n');
}

export function registerAgent(program: Command): void {
  const agent = program.command('agent').description('register agents and manage their secrets (docs/identity.md)');

  agent
    .command('add <name>')
    .description('register an agent and print its secret once')
    .option('--can <capabilities>', 'what it can do: write,bash,review,read-only')
    .option('--harness <harness>', 'its harness (claude-code, codex, cursor, ...)')
    .option('--json', 'print {agent, secret} as JSON')
    .action(
      action((ctx, name: string) => {
        const { agent: added, secret } = registry(ctx).add(name, {
          capabilities: typeof ctx.opts.can === 'string' ? ctx.opts.can.split(',') : [],
          harness: typeof ctx.opts.harness === 'string' ? ctx.opts.harness : null,
        });
        ctx.out.result({ agent: added, secret }, () => secretText(name, secret, 'Registered'));
      }),
    );

  agent
    .command('list')
    .description('registered agents (never their secrets)')
    .option('--json', 'print {agents} as JSON')
    .action(
      action((ctx) => {
        const agents = registry(ctx).list();
        ctx.out.result({ agents }, () => (agents.length === 0 ? 'No registered agents (palace agent add <name>).' : agents.map(line).join('\n')));
      }),
    );

  agent
    .command('rotate <name>')
    .description('issue a new secret (the old one stops working at once) and print it once')
    .option('--json', 'print {agent, secret} as JSON')
    .action(
      action((ctx, name: string) => {
        const { agent: rotated, secret } = registry(ctx).rotate(name);
        ctx.out.result({ agent: rotated, secret }, () => secretText(name, secret, 'Rotated'));
      }),
    );

  agent
    .command('revoke <name>')
    .description('stop its secret working (the name stays registered: nobody can use it until a rotate)')
    .option('--json', 'print {agent} as JSON')
    .action(
      action((ctx, name: string) => {
        const revoked = registry(ctx).revoke(name);
        ctx.out.result({ agent: revoked }, () => `Revoked ${name}: its secret no longer works. palace agent rotate ${name} issues a new one.`);
      }),
    );

  agent
    .command('retire <name>')
    .description('release its claims and reservations, revoke its secret for good, record who retired it')
    .option('--by <name>', 'who retires it (default: PALACE_AGENT_NAME, else human)')
    .option('--reason <text>', 'why')
    .option('--json', 'print the result as JSON')
    .action(
      action(async (ctx, name: string) => {
        const by = typeof ctx.opts.by === 'string' ? ctx.opts.by : ctx.config.agentName;
        const result = await runTool(ctx.config, 'palace_agent_retire', {
          name,
          ...(by ? { from_agent: by } : {}),
          ...(typeof ctx.opts.reason === 'string' ? { reason: ctx.opts.reason } : {}),
        });
        ctx.out.result(result, () =>
          [
            `Retired ${name} (by ${result.retired_by}): its secret is revoked for good.`,
            `Released claims: ${result.released_claims.join(', ') || 'none'}; reservations: ${result.released_reservations.join(', ') || 'none'}.`,
            `Recorded as ${result.event.id} (agent.retired).`,
          ].join('\n'),
        );
      }),
    );
}
