// Shared plumbing for commands: resolves config from global flags, opens the palace's logstream,
// runs the action, and turns its outcome into output and an exit code.

import type { Command } from 'commander';

import type { PalaceConfig } from '../hub/src/config.js';
import type { Logstream } from '../hub/src/logstream/logstream.js';
import { invalid } from '../hub/src/errors.js';
import { cliConfig } from './config.js';
import { makeOutput, reportError, type Output } from './output.js';

export interface CommandContext {
  config: Readonly<PalaceConfig>;
  out: Output;
  opts: Record<string, unknown>;
}

/** Collects repeatable option values. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

function contextOf(command: Command): CommandContext {
  const opts = command.optsWithGlobals<Record<string, unknown>>();
  const out = makeOutput(Boolean(opts.json));
  const config = cliConfig({
    palace: typeof opts.palace === 'string' ? opts.palace : undefined,
    backend: typeof opts.backend === 'string' ? opts.backend : undefined,
  });
  return { config, out, opts };
}

/**
 * The agent a command writes (or reads) as: its flag (`--from-agent`, `--agent`), else
 * PALACE_AGENT_NAME, else none when PALACE_AGENT_TOKEN is set (the hub, or the in-process tool, binds
 * the call to the agent that secret proves; docs/identity.md). Throws when there is neither a name
 * nor a secret. Every logstream command that writes as an agent asks here.
 */
export function writerName(ctx: CommandContext, flag: '--from-agent' | '--agent' = '--from-agent'): string | undefined {
  const raw = ctx.opts[flag === '--from-agent' ? 'fromAgent' : 'agent'];
  const agent = typeof raw === 'string' && raw.trim() !== '' ? raw.trim() : ctx.config.agentName;
  if (agent === undefined && ctx.config.agentToken === undefined)
    throw invalid(flag, `name the agent: ${flag} <machine>-<harness> (or set PALACE_AGENT_NAME, or PALACE_AGENT_TOKEN for a registered agent)`);
  return agent;
}

/** Wraps a command action: errors become output + exit code; the result's number is the exit code. */
export function action<A extends unknown[]>(
  fn: (ctx: CommandContext, ...args: A) => Promise<number | void> | number | void,
): (...args: [...A, Record<string, unknown>, Command]) => Promise<void> {
  return async (...args) => {
    const command = args[args.length - 1] as Command;
    const json = Boolean(command.optsWithGlobals<Record<string, unknown>>().json);
    try {
      const ctx = contextOf(command);
      const code = await fn(ctx, ...(args.slice(0, -2) as A));
      process.exitCode = typeof code === 'number' ? code : 0;
    } catch (err) {
      process.exitCode = reportError(err, json);
    }
  };
}

/**
 * Runs `fn` with the palace's logstream open, closing it afterwards: the direct SQLite road, left only
 * for offline admin (repair, sync-run). Every everyday command goes through runTool() / openToolSession().
 */
export async function withLogstream<T>(ctx: CommandContext, fn: (log: Logstream) => Promise<T> | T): Promise<T> {
  const { Logstream } = await import('../hub/src/logstream/logstream.js');
  const log = Logstream.open(ctx.config.palacePath, {
    durability: ctx.config.durability,
    maxSkewMs: ctx.config.syncMaxSkewMs,
  });
  try {
    return await fn(log);
  } finally {
    log.close();
  }
}
