// Diary and wake-up commands: diary write [entry]|read (agent from --agent or PALACE_AGENT_NAME) and
// wake-up (--wing, --aaak). Each runs one palace tool, through the live hub when there is one.

import type { Command } from 'commander';

import { invalid } from '../../hub/src/errors.js';
import { action, type CommandContext } from '../context.js';
import { readText } from '../read-input.js';
import { flag } from '../tool-args.js';
import { runTool } from '../tool-runner.js';

function agentOf(ctx: CommandContext): string {
  const agent = typeof ctx.opts.agent === 'string' && ctx.opts.agent.trim() ? ctx.opts.agent.trim() : ctx.config.agentName;
  if (!agent) throw invalid('--agent', 'give --agent NAME or set PALACE_AGENT_NAME');
  return agent;
}

function entryOf(o: Record<string, unknown>, positional: string | undefined): string {
  const given = [positional !== undefined && 'the entry text', typeof o.entry === 'string' && '--entry', typeof o.file === 'string' && '--file'].filter(Boolean);
  if (given.length > 1) throw invalid('--entry', `give the entry one way, not ${given.join(' and ')}`);
  if (positional !== undefined) return positional;
  if (typeof o.entry === 'string') return o.entry;
  if (typeof o.file === 'string') return readText(o.file, '--file');
  if (process.stdin.isTTY) throw invalid('--entry', 'give the entry with --entry, --file PATH, or on stdin');
  return readText('-', 'stdin');
}

export function registerDiary(program: Command): void {
  const diary = program.command('diary').description("an agent's own diary (drawers in its wing, room diary)");
  diary
    .command('write [entry]')
    .description('write an entry (the text, or --entry, --file or stdin)')
    .option('--agent <name>', 'agent name (default PALACE_AGENT_NAME)')
    .option('--entry <text>', 'the entry')
    .option('--file <path>', 'read the entry from a file')
    .option('--topic <topic>', 'short topic (default general)')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx, text?: string) => {
        const o = ctx.opts;
        const agent = agentOf(ctx);
        const r = await runTool(ctx.config, 'palace_diary_write', { agent_name: agent, entry: entryOf(o, text), topic: flag(o.topic) });
        ctx.out.result(r, () => `Wrote ${r.entry_id} in ${r.wing}/diary`);
      }),
    );
  diary
    .command('read')
    .description('the newest entries, newest first')
    .option('--agent <name>', 'agent name (default PALACE_AGENT_NAME)')
    .option('--last <n>', 'how many (1-100, default 10)')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx) => {
        const last = ctx.opts.last === undefined ? undefined : Number(ctx.opts.last);
        if (last !== undefined && !Number.isInteger(last)) throw invalid('--last', '--last must be a whole number');
        const r = await runTool(ctx.config, 'palace_diary_read', { agent_name: agentOf(ctx), last_n: last });
        ctx.out.result(r, () =>
          r.entries.length === 0
            ? 'No diary entries.'
            : r.entries.map((e) => `[${e.timestamp}] (${e.topic}) ${e.entry_id}\n${e.content}`).join('\n\n'),
        );
      }),
    );

  program
    .command('wake-up')
    .description('session-start context: identity plus the most important drawers by room (bounded)')
    .option('--wing <wing>', 'only this wing')
    .option('--aaak', 'show drawers by their AAAK summary where palace compress made one')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx) => {
        const r = await runTool(ctx.config, 'palace_wakeup', { wing: flag(ctx.opts.wing), ...(ctx.opts.aaak ? { aaak: true } : {}) });
        ctx.out.result(r, () => r.text);
      }),
    );
}
