// `palace patch submit|apply`: one command on each side of a patch. The worker's diff is checked
// against the request's base commit in a throwaway git worktree before anything is filed; the
// requester's apply verifies the sha256, runs `git apply` and acks applied, or failed with git's words.

import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import type { Command } from 'commander';

import { isEventId } from '../../hub/src/core/ids.js';
import { patchPathProblems } from '../../hub/src/core/patch-paths.js';
import type { LogEvent } from '../../hub/src/core/types.js';
import { HubError, invalid } from '../../hub/src/errors.js';
import { action, type CommandContext } from '../context.js';
import { eventLine } from '../format.js';
import { gitOk, runGit, type Git } from '../git.js';
import { EXIT } from '../output.js';
import { readText } from '../read-input.js';
import { runTool } from '../tool-runner.js';

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function agentOf(ctx: CommandContext, fallback?: string | null): string {
  const agent =
    str(ctx.opts.agent) ?? ctx.config.agentName ?? (fallback && fallback !== '*' ? fallback : undefined);
  if (!agent)
    throw invalid(
      '--agent',
      'name the agent you write as: --agent <machine>-<harness> (or set PALACE_AGENT_NAME)',
    );
  return agent;
}

/** One page of events through the one road (the live hub, or the MCP server in-process). */
async function listEvents(ctx: CommandContext, query: Record<string, unknown>): Promise<LogEvent[]> {
  return ((await runTool(ctx.config, 'palace_event_list', query))).events;
}

async function requestOf(ctx: CommandContext, correlationId: string): Promise<LogEvent> {
  const request = (await listEvents(ctx, { correlation_id: correlationId, type: 'task.request', limit: 1 }))[0];
  if (!request)
    throw new HubError('log.event_not_found', `no task.request with correlation_id '${correlationId}'`, {
      field: '--task',
    });
  return request;
}

/** `git apply --check` of `patch` against `base` in a temporary detached worktree, removed afterwards. */
export async function checkAppliesAt(git: Git, repo: string, base: string, patch: string): Promise<void> {
  const known = await git(['rev-parse', '--verify', '--quiet', `${base}^{commit}`], { cwd: repo });
  if (known.code !== 0)
    throw invalid(
      '--repo',
      `base commit '${base}' is not in the repository at ${repo}; fetch it, or run from the repository the task is about`,
    );
  const dir = mkdtempSync(join(tmpdir(), 'palace-patch-check-'));
  const tree = join(dir, 'tree');
  try {
    await gitOk(git, ['worktree', 'add', '--detach', '--quiet', tree, base], { cwd: repo });
    const check = await git(['apply', '--check', '-'], { cwd: tree, input: patch });
    if (check.code !== 0) {
      const said = (check.stderr || check.stdout).trim();
      throw new HubError(
        'patch.does_not_apply',
        `the patch does not apply to base commit ${base}; nothing was filed.\n${said}`,
        {
          data: { base_commit: base, git: said },
        },
      );
    }
  } finally {
    await git(['worktree', 'remove', '--force', tree], { cwd: repo }).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
    await git(['worktree', 'prune'], { cwd: repo }).catch(() => undefined);
  }
}

/**
 * The working tree's changes against HEAD, new untracked files included (ignored ones not), as one
 * diff. Staged through a throwaway index file, so the repository's own index is never touched.
 */
export async function workingTreeDiff(git: Git, repo: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'palace-patch-index-'));
  const env = { GIT_INDEX_FILE: join(dir, 'index') };
  try {
    await gitOk(git, ['read-tree', 'HEAD'], { cwd: repo, env });
    await gitOk(git, ['add', '--all', '--', '.'], { cwd: repo, env });
    return await gitOk(git, ['diff', '--cached', '--binary', '--no-color', '--no-ext-diff', 'HEAD'], {
      cwd: repo,
      env,
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * One event by id with the list tool alone (there is no get-event tool): the event just before it
 * (desc, before_event_id), then the first one after that; ids are local append order, so nothing can
 * land between the two. An unknown id is refused by the list (log.unknown_cursor): not found.
 */
async function eventById(ctx: CommandContext, id: string): Promise<LogEvent | undefined> {
  const previous = (await listEvents(ctx, { before_event_id: id, order: 'desc', limit: 1 }))[0];
  const event = (await listEvents(ctx, { ...(previous ? { since_event_id: previous.id } : {}), limit: 1 }))[0];
  return event?.id === id ? event : undefined;
}

/** The task as palace_tasks shows it (the fields patch apply checks). */
interface TaskInfo {
  correlation_id: string;
  status: string | null;
  worker: string | null;
  claim_event_id: string | null;
  stale_attempts?: Array<{ event_id: string; reason: string }>;
}

async function taskOf(ctx: CommandContext, correlationId: string): Promise<TaskInfo | undefined> {
  const page = await runTool(ctx.config, 'palace_tasks', { correlation_id: correlationId, limit: 1 });
  return page.tasks[0];
}

/**
 * Why this patch.ready is not the task's patch (empty when it is): it must come from the current
 * claim's worker, carry the live attempt, and come from the hub (origin) the claim was made on; on a
 * task never claimed, from the worker it was addressed to. The hub's stale_attempt flag counts too.
 */
export function foreignReasons(event: LogEvent, task: TaskInfo | undefined, claim: LogEvent | undefined): string[] {
  const reasons: string[] = [];
  const stale = event.metadata.stale_attempt as { reason?: unknown } | undefined;
  if (stale) reasons.push(`the hub flagged it stale_attempt: ${typeof stale.reason === 'string' ? stale.reason : 'its writer held no live claim'}`);
  if (!task) return [...reasons, `its task ${event.correlation_id ?? '?'} is unknown here`];
  if (task.worker === null) reasons.push(`task ${task.correlation_id} has no worker (never claimed, addressed to everyone)`);
  else if (event.from_agent !== task.worker) reasons.push(`written by ${event.from_agent}, but the task's worker is ${task.worker}`);
  if (task.claim_event_id !== null) {
    const attempt = typeof event.metadata.attempt === 'string' ? event.metadata.attempt : null;
    if (attempt !== task.claim_event_id) reasons.push(`its attempt is ${attempt ?? 'missing'}, but the live claim is ${task.claim_event_id}`);
    if (claim && event.origin_replica !== claim.origin_replica)
      reasons.push(`it comes from hub ${event.origin_replica}, but the claim was made on hub ${claim.origin_replica}`);
  }
  return reasons;
}

/**
 * The patch.ready to apply. A correlation id: the latest patch of the task that passes
 * foreignReasons (others are named and skipped); none passing is refused (patch.foreign). An event
 * id: that event, refused when foreign unless `acceptForeign` (the user named it and said so).
 */
async function patchEventOf(
  ctx: CommandContext,
  ref: string,
  acceptForeign: boolean,
): Promise<{ event: LogEvent; task: TaskInfo | undefined; claim: LogEvent | undefined; foreign: string[] }> {
  const explicit = isEventId(ref);
  let named: LogEvent | undefined;
  if (explicit) {
    named = await eventById(ctx, ref).catch((err: unknown) => {
      if (err instanceof HubError && err.code === 'log.unknown_cursor') return undefined;
      throw err;
    });
    if (!named) throw new HubError('log.event_not_found', `event '${ref}' not found`, { field: 'event' });
    if (named.type !== 'patch.ready')
      throw invalid(
        'event',
        `event '${ref}' is a ${named.type}, not a patch.ready; pass the patch.ready event or the task's correlation id`,
      );
  } else if (acceptForeign)
    throw invalid('--accept-foreign', '--accept-foreign applies only to one patch named by its event id: palace patch apply <evt_...> --accept-foreign');
  const correlationId = named ? named.correlation_id : ref;
  const task = correlationId ? await taskOf(ctx, correlationId) : undefined;
  const claim = task?.claim_event_id ? await eventById(ctx, task.claim_event_id) : undefined;
  if (named) {
    const foreign = foreignReasons(named, task, claim);
    if (foreign.length > 0 && !acceptForeign)
      throw new HubError(
        'patch.foreign',
        `not applied: ${named.id} is not the patch of the task's live claim:\n  - ${foreign.join('\n  - ')}\nTo apply it anyway, name it and say so: palace patch apply ${named.id} --accept-foreign`,
        { field: 'event', data: { event_id: named.id, reasons: foreign } },
      );
    return { event: named, task, claim, foreign };
  }
  const patches = await listEvents(ctx, { correlation_id: ref, type: 'patch.ready', order: 'desc', limit: 100 });
  if (patches.length === 0)
    throw new HubError('log.event_not_found', `no patch.ready with correlation_id '${ref}'`, {
      field: 'event',
    });
  const skipped: string[] = [];
  for (const event of patches) {
    const foreign = foreignReasons(event, task, claim);
    if (foreign.length === 0) {
      for (const s of skipped) ctx.out.warn(s);
      return { event, task, claim, foreign };
    }
    skipped.push(`skipped ${event.id} by ${event.from_agent}: ${foreign.join('; ')}`);
  }
  throw new HubError(
    'patch.foreign',
    `not applied: no patch of ${ref} comes from its live claim (worker ${task?.worker ?? 'none'}, attempt ${task?.claim_event_id ?? 'none'}):\n  - ${skipped.join('\n  - ')}\nTo apply one anyway, name it and say so: palace patch apply <evt_...> --accept-foreign`,
    { field: 'event', data: { reasons: skipped } },
  );
}

export function registerPatch(program: Command, git: Git = runGit): void {
  const patch = program
    .command('patch')
    .description('submit a patch for a task (worker) or apply one (requester)');

  patch
    .command('submit')
    .description(
      "file the working tree's changes against HEAD, new files included (or --file), after checking they apply to the request's base commit",
    )
    .requiredOption('--task <correlation_id>', 'the task this patch answers')
    .option('--file <path>', 'the patch to file instead of the working-tree diff (- = stdin)')
    .option('--agent <agent>', 'your agent name (default: PALACE_AGENT_NAME)')
    .option('--repo <dir>', 'the git repository (default: the current folder)')
    .option('--body <text>', 'a note for the requester, verbatim')
    .option('--json', 'print {artifact, event} as JSON')
    .action(
      action(async (ctx) => {
        const o = ctx.opts;
        const task = String(o.task);
        const agent = agentOf(ctx);
        const repo = resolve(str(o.repo) ?? process.cwd());
        const request = await requestOf(ctx, task);
        const content =
          str(o.file) !== undefined ? readText(String(o.file), '--file') : await workingTreeDiff(git, repo);
        if (content.trim() === '')
          throw invalid(
            o.file ? '--file' : 'diff',
            o.file
              ? `${String(o.file)} is empty; nothing was filed`
              : `the working tree at ${repo} has no changes against HEAD; nothing was filed`,
          );
        const base = request.base_commit ?? (await gitOk(git, ['rev-parse', 'HEAD'], { cwd: repo })).trim();
        if (!request.base_commit)
          ctx.out.note(`The request names no base commit; checked against HEAD (${base.slice(0, 12)}).`);
        await checkAppliesAt(git, repo, base, content);
        const filed = await runTool(ctx.config, 'palace_patch_submit', {
          correlation_id: task,
          from_agent: agent,
          content,
          body: str(o.body),
        });
        for (const warning of filed.artifact.warnings ?? []) ctx.out.warn(warning);
        ctx.out.result(filed, () =>
          [
            `Checked against ${base.slice(0, 12)}: applies. Filed ${filed.artifact.id} (sha256 ${filed.artifact.sha256.slice(0, 16)}…, ${filed.artifact.size_bytes} bytes).`,
            eventLine(filed.event),
          ].join('\n'),
        );
      }),
    );

  patch
    .command('apply <event_or_task>')
    .description(
      'fetch a patch.ready artifact (by event id, or the latest of a task), verify its sha256, git apply it, ack applied or failed',
    )
    .option('--repo <dir>', 'the git repository to apply it to (default: the current folder)')
    .option('--agent <agent>', "your agent name (default: PALACE_AGENT_NAME, else the patch's recipient)")
    .option('--note <text>', 'a note added to the applied ack')
    .option(
      '--accept-foreign',
      "with an event id: apply that patch even though it is not the live claim's (another author, attempt or hub)",
    )
    .option('--json', 'print {status, ack, author, origin, attempt, git_error?} as JSON')
    .action(
      action(async (ctx, ref: string) => {
        const o = ctx.opts;
        const repo = resolve(str(o.repo) ?? process.cwd());
        const { event, claim, foreign } = await patchEventOf(ctx, ref, o.acceptForeign === true);
        const artifactId = event.artifact_ids[0];
        if (!artifactId)
          throw new HubError('artifact.not_found', `patch.ready ${event.id} carries no artifact`, {
            field: 'event',
          });
        const attempt = typeof event.metadata.attempt === 'string' ? event.metadata.attempt : null;
        const origin = `${event.origin_replica}${claim && claim.origin_replica === event.origin_replica ? " (the claim's hub)" : ''}`;
        // Said before anything is applied: whose patch this is, from which hub, under which attempt.
        // (With --json the result carries author, origin and attempt; stderr stays for warnings.)
        if (o.json !== true) ctx.out.note(`Patch ${event.id} by ${event.from_agent}, origin hub ${origin}, attempt ${attempt ?? 'none'}`);
        for (const reason of foreign) ctx.out.warn(`applying a foreign patch (--accept-foreign): ${reason}`);
        const artifact = await runTool(ctx.config, 'palace_artifact_get', { artifact_id: artifactId });
        const unsafe = patchPathProblems(artifact.content);
        if (unsafe.length > 0)
          throw new HubError(
            'patch.unsafe_path',
            `not applied: ${event.id} touches paths a patch may not:\n  - ${unsafe.join('\n  - ')}`,
            { field: 'event', data: { event_id: event.id, problems: unsafe } },
          );
        const agent = agentOf(ctx, event.to_agent);
        const hash = createHash('sha256').update(artifact.content, 'utf8').digest('hex');
        let failure: string | undefined;
        if (hash !== artifact.sha256)
          failure = `sha256 mismatch: the artifact records ${artifact.sha256}, its content hashes to ${hash}; not applied`;
        else {
          const applied = await git(['apply', '-'], { cwd: repo, input: artifact.content });
          if (applied.code !== 0)
            failure = (applied.stderr || applied.stdout).trim() || `git apply exited ${applied.code}`;
        }
        const ack = await runTool(ctx.config, 'palace_event_ack', {
          event_id: event.id,
          from_agent: agent,
          status: failure ? 'failed' : 'applied',
          body: failure ?? str(o.note),
        });
        const status = failure ? 'failed' : 'applied';
        ctx.out.result(
          {
            status,
            patch_event_id: event.id,
            artifact_id: artifact.id,
            author: event.from_agent,
            origin: event.origin_replica,
            attempt,
            ...(foreign.length > 0 ? { accepted_foreign: foreign } : {}),
            ack,
            ...(failure ? { git_error: failure } : {}),
          },
          () =>
            failure
              ? `Not applied; acked failed:\n${failure}\n${eventLine(ack)}`
              : `Applied ${artifact.id} (sha256 verified) to ${repo}; acked applied:\n${eventLine(ack)}`,
        );
        return failure ? EXIT.error : EXIT.ok;
      }),
    );
}
