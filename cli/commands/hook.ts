// `palace hook run` (the save hooks of Claude Code and Codex) and `palace instructions`. A save hook
// never blocks or slows the agent: it hands the transcript to the live hub over HTTP (a background
// mine) and returns at once; it never loads the embedding model and fails silently, logged.

import { appendFileSync, existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

import type { Command } from 'commander';

import type { PalaceConfig } from '../../hub/src/config.js';
import { defaultWing } from '../../hub/src/mine/walk.js';
import { createHubClient, type HubClientError } from '../../hub/src/client/hub-client.js';
import { canonicalPalace, liveHub } from '../../hub/src/registration.js';
import { AGENT_INSTRUCTIONS } from '../../hub/src/tools/instructions.js';
import { action } from '../context.js';
import { httpFetch } from '../http-fetch.js';
import { readText } from '../read-input.js';

const HOOK_TIMEOUT_MS = 3000;
const FILING_HOOKS: ReadonlySet<string> = new Set(['stop', 'precompact', 'session-end', 'subagent-stop']);

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
    await client.callTool(
      'palace_mine',
      { source: transcript, mode: 'convos', background: true, added_by: agent, ...(wing ? { wing } : {}) },
      AbortSignal.timeout(HOOK_TIMEOUT_MS),
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

  program
    .command('instructions [topic]')
    .description('print the agent rules (topics: rules, mine, hooks)')
    .action(
      action((ctx, topic: string | undefined) => {
        const t = topic ?? 'rules';
        const text =
          t === 'mine'
            ? 'Mine a project: palace mine <dir> [--wing W] [--dry-run]. Transcripts: palace mine <dir> --mode convos, or --source claude-code|codex|gemini. Documents (PDF, DOCX, HTML, Markdown): --mode extract. First run: palace init <dir> proposes wings and rooms. Unchanged files are skipped; palace mined shows what was mined.'
            : t === 'hooks'
              ? 'Claude Code (settings.json): "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "palace hook run --hook stop --harness claude-code"}]}], "PreCompact": [{"hooks": [{"type": "command", "command": "palace hook run --hook precompact --harness claude-code"}]}]}. Codex: run `palace hook run --hook stop --harness codex --transcript <rollout.jsonl>`. Hooks hand the transcript to the live hub and return at once; without a hub they log to ~/.palace/logs/hooks.log.'
              : AGENT_INSTRUCTIONS;
        ctx.out.line(text);
      }),
    );
}
