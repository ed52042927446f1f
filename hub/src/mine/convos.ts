// Conversation transcripts to exchange chunks: recognises Claude Code JSONL, Codex CLI JSONL,
// Gemini CLI JSONL, ChatGPT conversations.json, Claude.ai export, Slack export and plain text with
// `>` user turns. One exchange (a user turn and the replies to it) is one chunk.

import { chunkText } from '../core/chunk.js';

export type ConvoFormat = 'claude-code' | 'codex' | 'gemini' | 'chatgpt' | 'claude-ai' | 'slack' | 'transcript';

export interface Turn {
  role: 'user' | 'assistant';
  text: string;
  speaker?: string;
}

export interface Conversation {
  title?: string;
  turns: Turn[];
}

export interface ParsedTranscript {
  format: ConvoFormat;
  conversations: Conversation[];
  /** A note appended to every chunk (e.g. Slack's unverified speaker roles). */
  footer?: string;
}

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Text of a message content that is a string or a list of typed blocks (tool use kept briefly). */
function blocksText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const parts: string[] = [];
  for (const b of content) {
    if (typeof b === 'string') parts.push(b);
    else if (isObj(b)) {
      if (typeof b.text === 'string') parts.push(b.text);
      else if (b.type === 'tool_use') parts.push(`[tool ${str(b.name)}: ${JSON.stringify(b.input ?? {}).slice(0, 400)}]`);
      else if (b.type === 'tool_result') parts.push(`[tool result: ${blocksText(b.content).slice(0, 400)}]`);
    }
  }
  return parts.filter((p) => p.trim()).join('\n');
}

function jsonLines(text: string): Json[] | undefined {
  const out: Json[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const v: unknown = JSON.parse(line);
      if (isObj(v)) out.push(v);
    } catch {
      return undefined;
    }
  }
  return out.length > 0 ? out : undefined;
}

function push(turns: Turn[], role: string, text: string, speaker?: string): void {
  const t = text.trim();
  if (!t) return;
  const r = role === 'user' || role === 'human' ? 'user' : role === 'assistant' || role === 'model' || role === 'gemini' ? 'assistant' : undefined;
  if (r) turns.push({ role: r, text: t, ...(speaker ? { speaker } : {}) });
}

function fromJsonl(rows: Json[]): ParsedTranscript | undefined {
  // Claude Code: {type: user|assistant, message: {role, content}}; subagent side-chains are skipped.
  if (rows.some((r) => isObj(r.message) && (r.type === 'user' || r.type === 'assistant'))) {
    const turns: Turn[] = [];
    for (const r of rows) {
      if (r.isSidechain === true || !isObj(r.message)) continue;
      const text = blocksText(r.message.content);
      // Tool results arrive as user-role messages; they belong to the assistant's work, not a new question.
      const toolOnly = Array.isArray(r.message.content) && r.message.content.every((b) => isObj(b) && b.type === 'tool_result');
      push(turns, toolOnly ? 'assistant' : str(r.message.role) || str(r.type), text);
    }
    return { format: 'claude-code', conversations: [{ turns }] };
  }
  // Codex CLI rollout: {type: response_item, payload: {type: message, role, content[]}} (older: bare items).
  const codexItems = rows
    .map((r) => (r.type === 'response_item' && isObj(r.payload) ? r.payload : r))
    .filter((p) => p.type === 'message' && typeof p.role === 'string' && Array.isArray(p.content));
  if (codexItems.length > 0 && rows.some((r) => r.type === 'response_item' || r.type === 'session_meta' || (r.type === 'message' && Array.isArray(r.content)))) {
    const turns: Turn[] = [];
    for (const p of codexItems) {
      const text = blocksText(p.content);
      // Codex injects environment context and instructions as user messages wrapped in tags.
      if (/^\s*<(environment_context|user_instructions)>/.test(text)) continue;
      push(turns, str(p.role), text);
    }
    return { format: 'codex', conversations: [{ turns }] };
  }
  // Gemini CLI: {type: user|gemini, content}.
  if (rows.some((r) => (r.type === 'user' || r.type === 'gemini') && (typeof r.content === 'string' || Array.isArray(r.content)))) {
    const turns: Turn[] = [];
    for (const r of rows) push(turns, str(r.type), blocksText(r.content));
    return { format: 'gemini', conversations: [{ turns }] };
  }
  return undefined;
}

function chatgpt(convs: Json[]): ParsedTranscript {
  const conversations: Conversation[] = [];
  for (const c of convs) {
    const mapping = isObj(c.mapping) ? c.mapping : {};
    const chain: Json[] = [];
    let node = typeof c.current_node === 'string' ? c.current_node : undefined;
    if (node === undefined) {
      const leaves = Object.entries(mapping).filter(([, v]) => isObj(v) && (!Array.isArray(v.children) || v.children.length === 0));
      node = leaves.at(-1)?.[0];
    }
    const seen = new Set<string>();
    while (node && !seen.has(node) && isObj(mapping[node])) {
      seen.add(node);
      const entry = mapping[node] as Json;
      if (isObj(entry.message)) chain.push(entry.message);
      node = typeof entry.parent === 'string' ? entry.parent : undefined;
    }
    const turns: Turn[] = [];
    for (const m of chain.reverse()) {
      const parts = isObj(m.content) && Array.isArray(m.content.parts) ? m.content.parts : [];
      push(turns, isObj(m.author) ? str(m.author.role) : '', parts.filter((p): p is string => typeof p === 'string').join('\n'));
    }
    conversations.push({ ...(typeof c.title === 'string' ? { title: c.title } : {}), turns });
  }
  return { format: 'chatgpt', conversations };
}

function claudeAi(convs: Json[]): ParsedTranscript {
  const conversations = convs.map((c) => {
    const turns: Turn[] = [];
    for (const m of Array.isArray(c.chat_messages) ? c.chat_messages : []) {
      if (!isObj(m)) continue;
      const text = str(m.text) || blocksText(m.content);
      push(turns, str(m.sender), text);
    }
    return { ...(typeof c.name === 'string' && c.name ? { title: c.name } : {}), turns };
  });
  return { format: 'claude-ai', conversations };
}

function slack(messages: Json[]): ParsedTranscript {
  // Roles are positional: the first speaker asks, everyone else answers. Slack does not say who is who.
  const first = str(messages.find((m) => typeof m.user === 'string')?.user);
  const turns: Turn[] = [];
  for (const m of messages) {
    if (m.type !== 'message' || typeof m.text !== 'string') continue;
    const who = str(m.user_name) || str(m.user) || 'unknown';
    push(turns, str(m.user) === first ? 'user' : 'assistant', `${who}: ${m.text}`, who);
  }
  return { format: 'slack', conversations: [{ turns }], footer: '(Slack export: speaker roles are positional, not verified)' };
}

function plainText(text: string): ParsedTranscript | undefined {
  const lines = text.split('\n');
  if (lines.filter((l) => l.startsWith('>')).length < 1) return undefined;
  const turns: Turn[] = [];
  let current: { role: 'user' | 'assistant'; lines: string[] } | undefined;
  const flush = (): void => {
    if (current) push(turns, current.role, current.lines.join('\n'));
  };
  for (const line of lines) {
    const isUser = line.startsWith('>');
    const role = isUser ? 'user' : 'assistant';
    const body = isUser ? line.replace(/^>\s?/, '') : line;
    if (!current || current.role !== role) {
      flush();
      current = { role, lines: [] };
    }
    current.lines.push(body);
  }
  flush();
  return turns.some((t) => t.role === 'user') ? { format: 'transcript', conversations: [{ turns }] } : undefined;
}

/** Recognises a transcript's format and reads its turns; undefined when it is not a conversation. */
export function parseTranscript(text: string): ParsedTranscript | undefined {
  const trimmed = text.trimStart();
  if (trimmed.startsWith('[') || trimmed.startsWith('{')) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      value = undefined;
    }
    if (value !== undefined) {
      const list = Array.isArray(value) ? value.filter(isObj) : isObj(value) ? [value] : [];
      if (list.some((c) => isObj(c.mapping))) return chatgpt(list);
      if (list.some((c) => Array.isArray(c.chat_messages))) return claudeAi(list);
      if (list.some((m) => m.type === 'message' && typeof m.ts === 'string')) return slack(list);
      return undefined;
    }
    const rows = jsonLines(text);
    if (rows) return fromJsonl(rows);
  }
  return plainText(text);
}

export interface ExchangeChunk {
  index: number;
  start: number;
  end: number;
  text: string;
  metadata: Record<string, unknown>;
}

/** Renders the transcript as text and cuts it into one chunk per exchange (long ones split). */
export function exchangeChunks(parsed: ParsedTranscript, maxChars = 1600): ExchangeChunk[] {
  const out: ExchangeChunk[] = [];
  let offset = 0;
  parsed.conversations.forEach((conv, ci) => {
    const exchanges: Turn[][] = [];
    for (const turn of conv.turns) {
      const last = exchanges.at(-1);
      if (turn.role === 'user' || !last) exchanges.push([turn]);
      else last.push(turn);
    }
    exchanges.forEach((ex, ei) => {
      const body = ex.map((t) => (t.role === 'user' ? t.text.split('\n').map((l) => `> ${l}`).join('\n') : t.text)).join('\n\n');
      const head = ei === 0 && conv.title ? `# ${conv.title}\n\n` : '';
      const text = head + body + (parsed.footer ? `\n\n${parsed.footer}` : '');
      const pieces = text.length <= maxChars ? [{ start: 0, end: text.length, text }] : chunkText(text);
      for (const p of pieces) {
        out.push({
          index: out.length,
          start: offset + p.start,
          end: offset + p.end,
          text: p.text,
          metadata: { format: parsed.format, conversation: ci, exchange: ei, ...(conv.title ? { title: conv.title } : {}) },
        });
      }
      offset += text.length + 2;
    });
  });
  return out;
}
