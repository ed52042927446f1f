// One small transcript per supported conversation format, written by the tests themselves, plus a
// small code repository with a .gitignore. Each transcript holds two exchanges about known facts.

import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export const Q1 = 'Which database did we choose for the event log?';
export const A1 = 'We chose SQLite in WAL mode for the event log.';
export const Q2 = 'And how do agents reach the hub?';
export const A2 = 'Over MCP on HTTP at the /mcp endpoint.';

const jsonl = (rows: unknown[]): string => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

/** File name → content, one per format. */
export const TRANSCRIPTS: Record<string, string> = {
  'claude-code/session.jsonl': jsonl([
    { type: 'user', sessionId: 's1', message: { role: 'user', content: Q1 } },
    { type: 'assistant', sessionId: 's1', message: { role: 'assistant', content: [{ type: 'text', text: A1 }, { type: 'tool_use', name: 'Read', input: { path: 'a.ts' } }] } },
    { type: 'user', sessionId: 's1', message: { role: 'user', content: [{ type: 'tool_result', content: 'file body' }] } },
    { type: 'user', sessionId: 's1', message: { role: 'user', content: Q2 } },
    { type: 'assistant', sessionId: 's1', message: { role: 'assistant', content: [{ type: 'text', text: A2 }] } },
  ]),
  'codex/rollout-2026-01-01.jsonl': jsonl([
    { type: 'session_meta', payload: { id: 'c1', cwd: '/work/x' } },
    { type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: '<environment_context>cwd</environment_context>' }] } },
    { type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: Q1 }] } },
    { type: 'response_item', payload: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: A1 }] } },
    { type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: Q2 }] } },
    { type: 'response_item', payload: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: A2 }] } },
  ]),
  'gemini/session-1.jsonl': jsonl([
    { sessionId: 'g1', projectHash: 'ab12', startTime: '2026-01-01T10:00:00.000Z' },
    { type: 'user', content: Q1 },
    { type: 'gemini', content: A1 },
    { type: 'user', content: Q2 },
    { type: 'gemini', content: [{ text: A2 }] },
  ]),
  'chatgpt/conversations.json': JSON.stringify([
    {
      title: 'Hub design',
      current_node: 'n4',
      mapping: {
        root: { id: 'root', message: null, parent: null, children: ['n1'] },
        n1: { id: 'n1', message: { author: { role: 'user' }, content: { parts: [Q1] } }, parent: 'root', children: ['n2'] },
        n2: { id: 'n2', message: { author: { role: 'assistant' }, content: { parts: [A1] } }, parent: 'n1', children: ['n3'] },
        n3: { id: 'n3', message: { author: { role: 'user' }, content: { parts: [Q2] } }, parent: 'n2', children: ['n4'] },
        n4: { id: 'n4', message: { author: { role: 'assistant' }, content: { parts: [A2] } }, parent: 'n3', children: [] },
      },
    },
  ]),
  'claude-ai/conversations.json': JSON.stringify([
    {
      uuid: 'u1',
      name: 'Hub design',
      chat_messages: [
        { sender: 'human', text: Q1 },
        { sender: 'assistant', text: '', content: [{ type: 'text', text: A1 }] },
        { sender: 'human', text: Q2 },
        { sender: 'assistant', text: A2 },
      ],
    },
  ]),
  'slack/general/2026-01-01.json': JSON.stringify([
    { type: 'message', user: 'U1', text: Q1, ts: '1.0' },
    { type: 'message', user: 'U2', text: A1, ts: '2.0' },
    { type: 'message', user: 'U1', text: Q2, ts: '3.0' },
    { type: 'message', user: 'U2', text: A2, ts: '4.0' },
  ]),
  'notes/chat.txt': `> ${Q1}\n${A1}\n\n> ${Q2}\n${A2}\n`,
};

export const FORMAT_OF: Record<string, string> = {
  'claude-code/session.jsonl': 'claude-code',
  'codex/rollout-2026-01-01.jsonl': 'codex',
  'gemini/session-1.jsonl': 'gemini',
  'chatgpt/conversations.json': 'chatgpt',
  'claude-ai/conversations.json': 'claude-ai',
  'slack/general/2026-01-01.json': 'slack',
  'notes/chat.txt': 'transcript',
};

export function writeTree(root: string, files: Record<string, string>): void {
  for (const [name, content] of Object.entries(files)) {
    const path = join(root, name);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
  }
}

const para = (topic: string, n: number): string =>
  Array.from({ length: n }, (_, i) => `Line ${i} about ${topic}: the hub serializes writes and keeps the writer lease.`).join('\n');

/** A small code repository: sources, docs, a .gitignore, ignored and skipped folders. */
export const REPO: Record<string, string> = {
  '.gitignore': 'secrets/\n*.log\n',
  'README.md': '# Demo\n\nA demo project whose hub keeps the writer lease and serializes writes.\n',
  'src/lease.ts': `// lease\n${para('the writer lease', 30)}\n`,
  'src/server.ts': `// server\n${para('the HTTP server', 12)}\n`,
  'docs/design.md': `# Design\n\n${para('design', 8)}\n`,
  'secrets/keys.txt': 'ignored by .gitignore, never mined\n',
  'debug.log': 'ignored log line\n',
  'node_modules/dep/index.js': 'module.exports = 1; // skipped folder\n',
  'image.png': '\u0000\u0001binary',
  'empty.txt': '   \n',
};
