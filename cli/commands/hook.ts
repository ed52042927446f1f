// `palace hook run` (the save hooks of Claude Code and Codex), `palace hook inbox` (cli/hook-inbox.ts)
// and `palace instructions`. A hook never blocks or slows the agent: a save hook hands the transcript
// to the live hub over HTTP (a background mine) and returns at once; all fail silently, logged.

import { appendFileSync, existsSync, mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';

import type { Command } from 'commander';

import type { PalaceConfig } from '../../hub/src/config.js';
import { defaultWing } from '../../hub/src/mine/walk.js';
import { createHubClient, type HubClientError } from '../../hub/src/client/hub-client.js';
import { canonicalPalace, liveHub } from '../../hub/src/registration.js';
import { AGENT_INSTRUCTIONS } from '../../hub/src/mcp/server/instructions.js';
import { LOGSTREAM_FILE } from '../../hub/src/core/palace-files.js';
import { action } from '../context.js';
import { collectInbox, hasLog, hookContextJson, inboxStatePath, openDirectInboxLog, toolInboxLog } from '../hook-inbox.js';
import { httpFetch } from '../http-fetch.js';
import { readText } from '../read-input.js';
import { shellQuote } from '../shell-quote.js';
import { runTool } from '../tool-runner.js';

const HOOK_TIMEOUT_MS = 3000;
const FILING_HOOKS: ReadonlySet<string> = new Set(['stop', 'precompact', 'session-end', 'subagent-stop']);
/** `hook inbox` gives up (printing nothing) after this long, so a prompt is never held up. */
const INBOX_BUDGET_MS = 2500;
/** How long `hook inbox` waits for the harness payload on stdin. */
const STDIN_WAIT_MS = 300;

/** The harness payload on stdin, read for at most `ms` (a harness that keeps stdin open never blocks us). */
function readStdinBriefly(ms: number): Promise<string> {
  if (process.stdin.isTTY) return Promise.resolve('');
  return new Promise((done) => {
    const chunks: Buffer[] = [];
    const finish = (): void => {
      clearTimeout(timer);
      process.stdin.off('data', onData);
      process.stdin.off('end', finish);
      process.stdin.off('error', finish);
      process.stdin.pause();
      process.stdin.unref?.();
      done(Buffer.concat(chunks).toString('utf8'));
    };
    const onData = (c: Buffer): void => void chunks.push(c);
    const timer = setTimeout(finish, ms);
    process.stdin.on('data', onData);
    process.stdin.once('end', finish);
    process.stdin.once('error', finish);
  });
}

/** The hooks settings for Claude Code and Codex: the inbox on session start and on every prompt, plus the save hooks. */
export function hookSettings(claudeAgent: string, codexAgent: string): { claude_code: unknown; codex: unknown } {
  const cmd = (command: string, timeout = 10) => ({ hooks: [{ type: 'command', command, timeout }] });
  const inbox = (agent: string, event: string) => `palace hook inbox --agent ${shellQuote(agent)} --event ${event}`;
  return {
    claude_code: {
      hooks: {
        SessionStart: [cmd(inbox(claudeAgent, 'SessionStart'))],
        UserPromptSubmit: [cmd(inbox(claudeAgent, 'UserPromptSubmit'))],
        Stop: [cmd('palace hook run --hook stop --harness claude-code')],
        PreCompact: [cmd('palace hook run --hook precompact --harness claude-code')],
      },
    },
    codex: {
      hooks: {
        SessionStart: [cmd(inbox(codexAgent, 'SessionStart'))],
        UserPromptSubmit: [cmd(inbox(codexAgent, 'UserPromptSubmit'))],
        Stop: [cmd('palace hook run --hook stop --harness codex')],
      },
    },
  };
}

/** Appends one line to ~/.palace/logs/hooks.log; a hook's only diagnostic channel. */
function hookLog(config: Readonly<PalaceConfig>, message: string): void {
  try {
    const dir = join(config.home, 'logs');
    mkdirSync(dir, { recursive: true });
    appendFileSync(join(dir, 'hooks.log'), `${new Date().toISOString()} ${message}\n`);
  } catch {
    // a hook never fails the agent, not even over its own log
  }
}

interface HookPayload {
  transcript_path?: string;
  cwd?: string;
  session_id?: string;
  hook_event_name?: string;
}

function payloadOf(raw: string): HookPayload {
  try {
    const v: unknown = JSON.parse(raw);
    return v && typeof v === 'object' ? (v as HookPayload) : {};
  } catch {
    return {};
  }
}

/** Queues a background mine of the transcript on the live hub; returns what happened, never throws. */
export async function fileTranscript(config: Readonly<PalaceConfig>, transcript: string, wing: string | undefined, agent: string): Promise<string> {
  const hub = liveHub({ ...config, hubForward: true });
  if (!hub) return `no live hub for ${canonicalPalace(config.palacePath)}; transcript not filed: ${transcript}`;
  const client = createHubClient({ baseUrl: hub.url, token: hub.tokens[0], fetch: httpFetch });
  try {
    await client.call(
      'palace_mine',
      { source: transcript, mode: 'convos', background: true, added_by: agent, ...(wing ? { wing } : {}) },
      { signal: AbortSignal.timeout(HOOK_TIMEOUT_MS) },
    );
    return `handed ${transcript} to the hub at ${hub.url}`;
  } catch (err) {
    const e = err as HubClientError;
    if (e.name === 'HubClientError' && e.code !== 'hub.unreachable')
      return `hub refused the transcript (${e.status === null ? e.code : `HTTP ${e.status}`}): ${e.message.slice(0, 300)}`;
    return `hub at ${hub.url} unreachable: ${e.message}`;
  }
}

export function registerHook(program: Command): void {
  const hook = program.command('hook').description('save hooks for Claude Code and Codex (file the session transcript through the hub)');
  hook
    .command('run')
    .description('run one hook; reads the harness payload (JSON with transcript_path, cwd) on stdin')
    .requiredOption('--hook <name>', 'session-start, stop, precompact or session-end')
    .option('--harness <name>', 'claude-code, codex or auto', 'auto')
    .option('--transcript <path>', 'the transcript file (instead of the payload on stdin)')
    .option('--wing <wing>', 'wing for the drawers (default: the session working folder name)')
    .action(
      action(async (ctx) => {
        const o = ctx.opts;
        const name = String(o.hook).toLowerCase();
        const payload = typeof o.transcript === 'string' || process.stdin.isTTY ? {} : payloadOf(readText('-', 'stdin'));
        if (!FILING_HOOKS.has(name)) return 0;
        const transcript = typeof o.transcript === 'string' ? resolve(o.transcript) : payload.transcript_path;
        if (!transcript || !existsSync(transcript)) {
          hookLog(ctx.config, `${name}: no transcript to file (${transcript ?? 'none given'})`);
          return 0;
        }
        const wing = typeof o.wing === 'string' ? o.wing : payload.cwd ? defaultWing(payload.cwd) : undefined;
        const harness = String(o.harness) === 'auto' ? (transcript.includes(`${'.codex'}`) ? 'codex' : 'claude-code') : String(o.harness);
        const agent = ctx.config.agentName ?? `hook-${harness}`;
        hookLog(ctx.config, `${name}: ${await fileTranscript(ctx.config, transcript, wing, agent)}`);
        return 0;
      }),
    );

  hook
    .command('inbox')
    .description("print what is new for an agent since its last look (tasks for it, acks and patches on its tasks, expired claims) as hook additional context; nothing when nothing is new")
    .option('--agent <agent>', 'the agent whose inbox this is (<machine>-<harness>; default PALACE_AGENT_NAME)')
    .option('--event <name>', 'the hook event to answer (default: hook_event_name from the payload on stdin, else UserPromptSubmit)')
    .option('--format <format>', 'json (hookSpecificOutput.additionalContext, for Claude Code and Codex) or text', 'json')
    .option('--state-file <path>', 'keep the cursor here (default ~/.palace/inbox/<agent>.json)')
    .action(
      action(async (ctx) => {
        const o = ctx.opts;
        const agent = typeof o.agent === 'string' && o.agent !== '' ? o.agent : ctx.config.agentName;
        if (!agent) {
          hookLog(ctx.config, 'inbox: no --agent and no PALACE_AGENT_NAME; nothing to report');
          return 0;
        }
        const watchdog = setTimeout(() => {
          hookLog(ctx.config, `inbox ${agent}: gave up after ${INBOX_BUDGET_MS} ms`);
          process.exit(0); // a hook never holds up the prompt
        }, INBOX_BUDGET_MS);
        watchdog.unref();
        try {
          const payload = typeof o.event === 'string' ? {} : payloadOf(await readStdinBriefly(STDIN_WAIT_MS));
          const event = typeof o.event === 'string' ? o.event : payload.hook_event_name || 'UserPromptSubmit';
          if (!hasLog(ctx.config, LOGSTREAM_FILE)) return 0;
          const statePath = typeof o.stateFile === 'string' ? o.stateFile : inboxStatePath(ctx.config.home, agent);
          let inbox;
          if (liveHub(ctx.config)) inbox = await collectInbox(toolInboxLog((args) => runTool(ctx.config, 'palace_event_list', args)), agent, statePath);
          else {
            const direct = await openDirectInboxLog(ctx.config.palacePath);
            try {
              inbox = await collectInbox(direct.log, agent, statePath);
            } finally {
              direct.close();
            }
          }
          if (inbox.text) ctx.out.line(o.format === 'text' ? inbox.text : hookContextJson(event, inbox.text));
        } catch (err) {
          hookLog(ctx.config, `inbox ${agent}: ${(err as Error).message}`);
        } finally {
          clearTimeout(watchdog);
        }
        return 0;
      }),
    );

  program
    .command('instructions [topic]')
    .description('print the agent rules (topics: rules, mine, hooks)')
    .option('--agent <agent>', 'for hooks: the agent name in the inbox commands (default: PALACE_AGENT_NAME, else <host>-claude / <host>-codex)')
    .action(
      action((ctx, topic: string | undefined) => {
        const t = topic ?? 'rules';
        if (t === 'hooks') {
          const named = typeof ctx.opts.agent === 'string' ? ctx.opts.agent : ctx.config.agentName;
          const host = hostname().split('.')[0] ?? 'machine';
          const settings = hookSettings(named ?? `${host}-claude`, named ?? `${host}-codex`);
          ctx.out.line(
            [
              '# Claude Code: merge into ~/.claude/settings.json (or .claude/settings.json in a project)',
              JSON.stringify(settings.claude_code, null, 2),
              '# Codex: ~/.codex/hooks.json (or <repo>/.codex/hooks.json); hooks must be enabled ([features] hooks = true in ~/.codex/config.toml on older versions)',
              JSON.stringify(settings.codex, null, 2),
              '# The inbox hooks print what is new for the agent as additional context (nothing when nothing is new);',
              '# the save hooks hand the transcript to the live hub. Details: docs/hooks.md',
            ].join('\n'),
          );
          return;
        }
        const text =
          t === 'mine'
            ? 'Mine a project: palace mine <dir> [--wing W] [--dry-run]. Transcripts: palace mine <dir> --mode convos, or --source claude-code|codex|gemini. Documents (PDF, DOCX, HTML, Markdown): --mode extract. First run: palace init <dir> proposes wings and rooms. Unchanged files are skipped; palace mined shows what was mined.'
            : AGENT_INSTRUCTIONS;
        ctx.out.line(text);
      }),
    );
}
