// Diary and wake-up tools: per-agent diary entries (drawers in the agent's wing) and the bounded
// session-start context (identity + the most important drawers by room).

import { z } from 'zod';

import { summaryReader } from '../../memory/curation/compress.js';
import { readDiary, writeDiary } from '../../memory/drawers/diary.js';
import { wakeUp } from '../../memory/navigation/wakeup.js';
import { canonicalPalace } from '../../registration.js';
import { defineTool } from './tool.js';
import { writerOf } from '../../memory/drawers/identity.js';

export const diaryWriteTool = defineTool({
  name: 'palace_diary_write',
  title: 'Write a diary entry',
  description:
    "Write an entry in your own diary: what you did, learned or decided this session, in your words. Stored verbatim as a drawer in your wing (room 'diary'), searchable like any drawer. Never write secrets.",
  input: {
    agent_name: z.string().optional().describe('Your stable agent name (<machine>-<harness>); default PALACE_AGENT_NAME of the hub'),
    created_by: z.string().optional().describe('Alias of agent_name'),
    entry: z.string().describe('The entry text, kept verbatim'),
    topic: z.string().optional().describe('Short topic (default general)'),
    wing: z.string().optional().describe("Wing to write in (default: the agent's own wing)"),
  },
  mutating: true,
  lockFree: false,
  handler: async (args, hub) => writeDiary(await hub.memory.get(), { ...args, agent_name: writerOf(args, 'agent_name', 'created_by') }, hub.config.agentName),
});

export const diaryReadTool = defineTool({
  name: 'palace_diary_read',
  title: 'Read a diary',
  description: "Read an agent's newest diary entries (newest first, default 10).",
  input: {
    agent_name: z.string().optional(),
    last_n: z.number().int().min(1).max(100).optional(),
    wing: z.string().optional(),
  },
  mutating: false,
  lockFree: true,
  handler: async (args, hub) => readDiary(await hub.memory.get(), args, hub.config.agentName),
});

export const wakeupTool = defineTool({
  name: 'palace_wakeup',
  title: 'Wake up',
  description:
    'Load at session start: L0 identity; the palace overview (wings and rooms with sizes, open tasks, latest decisions and diary entries); L1, the most important drawers (by importance, rating and recency) grouped by room, code named by path and lines. About 5,000 characters at most. Use palace_search for anything deeper.',
  input: {
    wing: z.string().optional().describe('Only this wing (project)'),
    aaak: z.boolean().optional().describe('Show drawers by their AAAK summary where palace compress made one (shorter, lossy)'),
  },
  mutating: false,
  lockFree: true,
  handler: async (args, hub) =>
    wakeUp(await hub.memory.get(), hub.config.home, args, args.aaak ? summaryReader(canonicalPalace(hub.config.palacePath)) : undefined, () =>
      // The newest open tasks from the stored projection (one page), and their true count.
      hub.logstream.taskPage({ open: true, order: 'desc', limit: 50 }),
    ),
});

export const diaryTools = [diaryWriteTool, diaryReadTool, wakeupTool];
