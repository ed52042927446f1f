// `palace reserve|reservations|release` (advisory file reservations) and `palace guard install|check`
// (a git pre-commit hook refusing commits that touch another agent's exclusive reservation).

import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';

import type { Command } from 'commander';

import { pathMatches } from '../../hub/src/core/globs.js';
import { LOGSTREAM_FILE } from '../../hub/src/core/palace-files.js';
import { describeHolder, type Reservation } from '../../hub/src/core/task-state.js';
import { HubError, invalid } from '../../hub/src/errors.js';
import { action, type CommandContext } from '../context.js';
import { reservationLine } from '../format.js';
import { EXIT } from '../output.js';
import { shellQuote as sh } from '../shell-quote.js';
import { flag } from '../tool-args.js';
import { runTool } from '../tool-runner.js';

/** The line that marks a pre-commit hook as palace's own (install replaces only those). */
export const GUARD_MARKER = '# palace guard: pre-commit hook';

/** The writer: --from-agent, else PALACE_AGENT_NAME, else none with PALACE_AGENT_TOKEN (the hub fills in the agent it proves). */
function agentOf(ctx: CommandContext): string | undefined {
  const agent = ctx.opts.fromAgent ?? ctx.config.agentName;
  if (typeof agent === 'string' && agent.trim() !== '') return agent.trim();
  if (ctx.config.agentToken !== undefined) return undefined;
  throw invalid('--from-agent', 'name your agent with --from-agent (or PALACE_AGENT_NAME, or PALACE_AGENT_TOKEN for a registered agent)');
}

function git(repo: string, args: readonly string[]): string {
  try {
    return execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw invalid('--repo', `git ${args[0] ?? ''} failed in ${repo}: ${(e.stderr ?? e.message).trim()}`);
  }
}

/** The hook script: runs `palace guard check --staged`; blocks only on its "refused" exit (3). */
export function guardScript(options: { node: string; palace: string; palaceDir: string; agent?: string | undefined; stream?: string | undefined }): string {
  const stream = options.stream ? ` --stream ${sh(options.stream)}` : '';
  return `#!/bin/sh
${GUARD_MARKER}
# Refuses a commit that touches paths another agent holds in an exclusive palace reservation.
# Override once: PALACE_GUARD=off git commit ...   (or: git commit --no-verify)
# Never blocks when palace cannot be run or the palace has no log: it warns and lets the commit through.
[ "$PALACE_GUARD" = "off" ] && exit 0
NODE=${sh(options.node)}
PALACE=${sh(options.palace)}
AGENT=${sh(options.agent ?? '')}
if [ ! -x "$NODE" ] || [ ! -f "$PALACE" ]; then
  echo "palace guard: cannot run palace ($PALACE); commit not checked" >&2
  exit 0
fi
"$NODE" "$PALACE" --palace ${sh(options.palaceDir)} guard check --staged --agent "\${PALACE_AGENT_NAME:-$AGENT}"${stream}
code=$?
if [ "$code" -eq 3 ]; then exit 1; fi
if [ "$code" -ne 0 ]; then echo "palace guard: the check failed (exit $code); commit not checked" >&2; fi
exit 0
`;
}

export interface GuardHit {
  path: string;
  reservation: Reservation;
}

/** Staged (or given) paths that fall under another agent's exclusive reservation. */
export function guardHits(paths: readonly string[], reservations: readonly Reservation[], agent: string | undefined): GuardHit[] {
  const hits: GuardHit[] = [];
  for (const path of paths)
    for (const r of reservations)
      if (r.exclusive && r.agent !== agent && r.paths.some((p) => pathMatches(path, p))) hits.push({ path, reservation: r });
  return hits;
}

/** Reservations in force through the one road (the live hub, or the MCP server in-process). */
async function reservationsOf(ctx: CommandContext, filter: Record<string, unknown>): Promise<{ reservations: Reservation[]; count: number }> {
  return (await runTool(ctx.config, 'palace_reservations', filter));
}

export function registerReserve(program: Command): void {
  program
    .command('reserve <paths...>')
    .description('reserve paths or globs you are editing (advisory; conflicts are refused unless --force)')
    .requiredOption('--stream <stream>', 'the stream, e.g. project/<name>')
    .option('--from-agent <agent>', 'your agent name (default PALACE_AGENT_NAME)')
    .option('--exclusive', 'nobody else may reserve or commit these paths')
    .option('--ttl <duration>', 'how long it holds (ms, or 90s, 30m, 2h; default 30m)')
    .option('--task <correlation_id>', 'the task it is for; released when the task is done')
    .option('--force', 'reserve despite conflicts')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx, paths: string[]) => {
        const o = ctx.opts;
        const from = agentOf(ctx);
        const result = await runTool(ctx.config, 'palace_reserve', {
          paths,
          stream: flag(o.stream),
          from_agent: from,
          exclusive: Boolean(o.exclusive),
          ttl_ms: flag(o.ttl),
          correlation_id: flag(o.task),
          force: Boolean(o.force),
        });
        for (const r of result.overridden) ctx.out.warn(`forced over: ${describeHolder(r)}`);
        ctx.out.result(result, () => `Reserved (${result.reservation.reservation_id}):\n${reservationLine(result.reservation)}`);
      }),
    );

  program
    .command('reservations')
    .description('file reservations in force now')
    .option('--stream <stream>', 'only this stream')
    .option('--agent <agent>', 'only those held by this agent')
    .option('--path <path>', 'only those covering this path or glob')
    .option('--task <correlation_id>', 'only those made for this task')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx) => {
        const o = ctx.opts;
        const { reservations: list } = await reservationsOf(ctx, { stream: o.stream, agent: o.agent, path: o.path, correlation_id: o.task });
        ctx.out.result({ reservations: list, count: list.length }, () =>
          list.length === 0 ? 'No reservations.' : [`${list.length} reservation(s):`, ...list.map(reservationLine)].join('\n'),
        );
      }),
    );

  program
    .command('release <reservation_id>')
    .description('release a file reservation (appends file.released)')
    .option('--from-agent <agent>', 'your agent name (default PALACE_AGENT_NAME)')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx, id: string) => {
        const from = agentOf(ctx);
        const event = await runTool(ctx.config, 'palace_release', { reservation_id: id, from_agent: from });
        ctx.out.result(event, () => `Released ${id}.`);
      }),
    );

  const guard = program.command('guard').description('git pre-commit guard for exclusive file reservations');
  guard
    .command('install')
    .description('write a pre-commit hook that refuses commits touching paths another agent reserved exclusively')
    .option('--repo <dir>', 'the git repository (default: the current directory)', '.')
    .option('--agent <agent>', 'the agent committing here (default: PALACE_AGENT_NAME when the hook runs)')
    .option('--stream <stream>', 'check only reservations of this stream')
    .option('--force', 'replace an existing pre-commit hook that is not palace\'s (it is kept as pre-commit.before-palace)')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx) => {
        const o = ctx.opts;
        const repo = resolve(String(o.repo));
        const hooksRel = git(repo, ['rev-parse', '--git-path', 'hooks']).trim();
        const hooks = isAbsolute(hooksRel) ? hooksRel : join(repo, hooksRel);
        const hook = join(hooks, 'pre-commit');
        let backup: string | undefined;
        if (existsSync(hook) && !readFileSync(hook, 'utf8').includes(GUARD_MARKER)) {
          if (!o.force) throw invalid('--repo', `${hook} exists and is not palace's; pass --force to replace it (it is kept as pre-commit.before-palace)`);
          backup = join(hooks, 'pre-commit.before-palace');
          renameSync(hook, backup);
        }
        mkdirSync(dirname(hook), { recursive: true });
        const script = guardScript({
          node: process.execPath,
          palace: realpathSync(process.argv[1] ?? ''),
          palaceDir: ctx.config.palacePath,
          agent: typeof o.agent === 'string' ? o.agent : undefined,
          stream: typeof o.stream === 'string' ? o.stream : undefined,
        });
        writeFileSync(hook, script, { mode: 0o755 });
        chmodSync(hook, 0o755);
        ctx.out.result({ hook, palace: ctx.config.palacePath, ...(backup ? { backup } : {}) }, () =>
          `Installed ${hook}\n  checks staged paths against exclusive reservations in ${ctx.config.palacePath}\n  override once: PALACE_GUARD=off git commit ...  (or git commit --no-verify)`,
        );
      }),
    );

  guard
    .command('check [paths...]')
    .description('exit 3 when a path (or, with --staged, a staged path) is reserved exclusively by another agent')
    .option('--staged', "check the paths staged in the current directory's git repository")
    .option('--agent <agent>', 'the agent committing (its own reservations never block it)')
    .option('--stream <stream>', 'check only reservations of this stream')
    .option('--json', 'machine-readable output')
    .action(
      action(async (ctx, given: string[] = []) => {
        const o = ctx.opts;
        if (!existsSync(join(ctx.config.palacePath, LOGSTREAM_FILE))) {
          ctx.out.warn(`palace guard: no palace log at ${ctx.config.palacePath}; commit not checked`);
          return EXIT.ok;
        }
        const staged = o.staged ? git('.', ['diff', '--cached', '--name-only', '-z']).split('\0').filter(Boolean) : [];
        const paths = [...given, ...staged];
        const agent = typeof o.agent === 'string' && o.agent.trim() ? o.agent.trim() : ctx.config.agentName;
        if (!agent) ctx.out.warn('palace guard: no agent name (PALACE_AGENT_NAME); every exclusive reservation counts as another agent\'s');
        let reservations: Reservation[] = [];
        if (paths.length > 0) {
          try {
            reservations = (await reservationsOf(ctx, { stream: o.stream })).reservations;
          } catch (err) {
            // A hub that went away between the check and the call: never block a commit on it.
            if (!(err instanceof HubError && err.code === 'hub.unreachable')) throw err;
            ctx.out.warn(`palace guard: ${err.message}; commit not checked`);
            return EXIT.ok;
          }
        }
        const hits = guardHits(paths, reservations, agent);
        if (hits.length > 0)
          throw new HubError(
            'guard.refused',
            `palace guard: commit refused; reserved exclusively by another agent:\n${hits.map((h) => `  ${h.path}: ${describeHolder(h.reservation)}`).join('\n')}\nCoordinate with the holder, or override once: PALACE_GUARD=off git commit ... (or git commit --no-verify)`,
            { data: { hits: hits.map((h) => ({ path: h.path, ...h.reservation })) } },
          );
        ctx.out.result({ ok: true, checked: paths.length }, () => `palace guard: ${paths.length} path(s) checked, none reserved by another agent`);
        return EXIT.ok;
      }),
    );
}
