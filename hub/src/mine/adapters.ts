// The registry of source adapters for `palace mine --source <name>`. An adapter names a mode, the
// files it reads and where they live by default. This build runs one runner semantics, "files"
// (a one-shot pass over local files, idempotent per file); adapters needing another are refused.

import { homedir } from 'node:os';
import { join } from 'node:path';

import { HubError } from '../errors.js';

export type MineMode = 'projects' | 'convos' | 'extract';
export type RunnerSemantics = 'files' | 'poll' | 'push';

export interface SourceAdapter {
  name: string;
  description: string;
  mode: MineMode;
  runner: RunnerSemantics;
  /** Where the source lives when no path is given. */
  defaultRoot?: () => string;
  /** Only files whose path passes this (on top of the mode's extensions). */
  accepts?: (file: string) => boolean;
  /** The room its drawers go to (default: per mode). */
  room?: string;
}

export const SUPPORTED_RUNNERS: ReadonlySet<RunnerSemantics> = new Set(['files']);

export const ADAPTERS: readonly SourceAdapter[] = [
  { name: 'project', description: 'project files: text and code (the default mode)', mode: 'projects', runner: 'files' },
  { name: 'convos', description: 'conversation transcripts of any supported format', mode: 'convos', runner: 'files' },
  { name: 'extract', description: 'documents: PDF, DOCX, HTML, Markdown, text', mode: 'extract', runner: 'files' },
  {
    name: 'claude-code',
    description: 'Claude Code session transcripts (~/.claude/projects/**/*.jsonl)',
    mode: 'convos',
    runner: 'files',
    defaultRoot: () => join(homedir(), '.claude', 'projects'),
    accepts: (f) => f.endsWith('.jsonl'),
    room: 'claude-code',
  },
  {
    name: 'codex',
    description: 'Codex CLI rollouts (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl)',
    mode: 'convos',
    runner: 'files',
    defaultRoot: () => join(homedir(), '.codex', 'sessions'),
    accepts: (f) => f.endsWith('.jsonl'),
    room: 'codex',
  },
  {
    name: 'gemini',
    description: 'Gemini CLI chats (~/.gemini/tmp/<hash>/chats/session-*.jsonl)',
    mode: 'convos',
    runner: 'files',
    defaultRoot: () => join(homedir(), '.gemini', 'tmp'),
    accepts: (f) => f.endsWith('.jsonl'),
    room: 'gemini',
  },
  { name: 'chatgpt', description: 'ChatGPT export (conversations.json)', mode: 'convos', runner: 'files', accepts: (f) => f.endsWith('.json'), room: 'chatgpt' },
  { name: 'claude-ai', description: 'Claude.ai export (conversations.json)', mode: 'convos', runner: 'files', accepts: (f) => f.endsWith('.json'), room: 'claude-ai' },
  { name: 'slack', description: 'Slack export (one JSON file per channel and day)', mode: 'convos', runner: 'files', accepts: (f) => f.endsWith('.json'), room: 'slack' },
  { name: 'slack-live', description: 'Slack channels over the Slack API (needs a polling runner with credentials and cursors)', mode: 'convos', runner: 'poll' },
  { name: 'imap', description: 'a mailbox over IMAP (needs a polling runner with credentials and cursors)', mode: 'extract', runner: 'poll' },
  { name: 'webhook', description: 'documents pushed by a webhook (needs a push runner)', mode: 'extract', runner: 'push' },
];

/** The adapter of that name, or one of two distinct errors: unknown name, unsupported runner. */
export function resolveAdapter(name: string): SourceAdapter {
  const adapter = ADAPTERS.find((a) => a.name === name);
  if (!adapter)
    throw new HubError('mine.unknown_adapter', `no source adapter named '${name}'; known adapters: ${ADAPTERS.map((a) => a.name).join(', ')}`, {
      field: 'source',
    });
  if (!SUPPORTED_RUNNERS.has(adapter.runner))
    throw new HubError(
      'mine.unsupported_adapter',
      `source adapter '${name}' needs the '${adapter.runner}' runner semantics, which this build does not run (supported: ${[...SUPPORTED_RUNNERS].join(', ')})`,
      { field: 'source' },
    );
  return adapter;
}
