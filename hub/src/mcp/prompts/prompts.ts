// MCP prompts (issue 33), which clients show as slash commands: delegate a task, take the next ready
// task, review and apply a patch, wake up, file a decision. Each fills in the steps of palace's
// delegation protocol (instructions.ts) with what the log already knows. Identity comes from the
// arguments (the agent's own name), never from clientInfo. Arguments complete (completion/complete):
// agent names, task ids, wings and rooms.

import { completable } from '@modelcontextprotocol/sdk/server/completable.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { GetPromptResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

import { computeInbox } from '../../core/inbox.js';
import type { HubServices } from '../../services.js';
import { matching, recentAgents, recentTasks, rpcErrorFor } from '../resources/resources.js';

function user(text: string, description: string): GetPromptResult {
  return { description, messages: [{ role: 'user', content: { type: 'text', text } }] };
}

async function guarded(fn: () => Promise<GetPromptResult> | GetPromptResult): Promise<GetPromptResult> {
  try {
    return await fn();
  } catch (err) {
    throw rpcErrorFor(err);
  }
}

/** A correlation id from a goal: task_<slug of its first words>. */
export function taskSlug(goal: string): string {
  const slug = goal
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .split('_')
    .slice(0, 6)
    .join('_');
  return `task_${slug || 'work'}`;
}

export function registerPrompts(server: McpServer, hub: HubServices): void {
  const agent = (description: string) => completable(z.string().describe(description), (typed) => matching(recentAgents(hub), typed));
  const taskId = (description: string) =>
    completable(z.string().describe(description), async (typed) => matching(await recentTasks(hub), typed));
  const wings = async (): Promise<string[]> => Object.keys((await (await hub.memory.get()).listWings()).wings);
  const wing = completable(z.string().describe('Wing (project) to file under').optional(), async (typed) => matching(await wings(), typed ?? ''));
  const room = completable(z.string().describe('Room within the wing').optional(), async (typed, context) => {
    const inWing = context?.arguments?.wing;
    const rooms = await (await hub.memory.get()).listRooms(inWing || undefined);
    return matching(Object.keys(rooms.rooms), typed ?? '');
  });

  server.registerPrompt(
    'delegate',
    {
      title: 'Delegate a task',
      description: 'Hand a task to another agent through the log: goal, definition of done, base commit and recipient.',
      argsSchema: {
        goal: z.string().describe('What the worker should achieve'),
        definition_of_done: z.string().describe('How anyone can tell it is done (tests, behaviour)'),
        base_commit: z.string().describe('The commit the work starts from'),
        recipient: agent("The worker's agent name, or * for anyone"),
        from_agent: agent('Your own agent name (<machine>-<harness>)'),
      },
    },
    (args) =>
      guarded(() => {
        const cid = taskSlug(args.goal);
        const body = JSON.stringify({ goal: args.goal, base_commit: args.base_commit, definition_of_done: args.definition_of_done }, null, 2);
        return user(
          [
            `Delegate this task through palace. Call palace_event_append with:`,
            `- type: task.request, status: open, stream: <this project>, room: <area of the code>`,
            `- from_agent: ${args.from_agent}, to_agent: ${args.recipient}`,
            `- correlation_id: ${cid} (change the slug if it is taken)`,
            `- body:\n${body}`,
            `Then wait for the worker's ack and patch with palace_event_wait (correlation_id ${cid}), or subscribe to palace://task/${cid}.`,
            `When patch.ready arrives: check the artifact's sha256, apply only as an explicit decision stated to the user, run the tests, ack applied or failed, then file one drawer with the outcome.`,
          ].join('\n'),
          `Delegate ${cid} to ${args.recipient}`,
        );
      }),
  );

  server.registerPrompt(
    'next_task',
    {
      title: 'Take the next ready task',
      description: 'Find the next task that is open for you with its dependencies done, and claim it.',
      argsSchema: { agent: agent('Your own agent name') },
    },
    (args) =>
      guarded(() => {
        const ready = hub.logstream.ready({ agent: args.agent, limit: 5 });
        if (ready.length === 0)
          return user(`No task is ready for ${args.agent}. Wait with palace_event_wait (to_agent ${args.agent}) or subscribe to palace://inbox/${args.agent}.`, 'Nothing ready');
        const lines = ready.map((t) => `- ${t.correlation_id} from ${t.requester ?? '?'} (request ${t.request_event_id ?? '?'})`);
        const first = ready[0];
        return user(
          [
            `Ready tasks for ${args.agent} (oldest first):`,
            ...lines,
            `Take ${first?.correlation_id}: read its request (palace://task/${first?.correlation_id}), then claim it before any work with palace_event_ack { event_id: ${first?.request_event_id}, from_agent: ${args.agent}, status: claimed }.`,
            `If the claim says you did not win, take the next one. Follow the request body exactly. Finish with palace_patch_submit (status ready) or a task.reply with blocked or failed and verbatim notes.`,
          ].join('\n'),
          `${ready.length} ready`,
        );
      }),
  );

  server.registerPrompt(
    'review_patch',
    {
      title: 'Review and apply a patch',
      description: "Review a task's submitted patch, check its sha256, apply it as an explicit decision and ack the outcome.",
      argsSchema: { correlation_id: taskId('The task whose patch to review'), agent: agent('Your own agent name (the requester)') },
    },
    (args) =>
      guarded(() => {
        const task = hub.logstream.task(args.correlation_id);
        const patches = hub.logstream.eventsOf(args.correlation_id).filter((e) => e.type === 'patch.ready');
        const last = patches.at(-1);
        if (!last) return user(`Task ${args.correlation_id} has no patch yet (status ${task.status ?? 'none'}).`, 'No patch');
        const artifact = last.artifact_ids[0];
        const meta = artifact ? hub.logstream.getArtifactBytes(artifact).meta : undefined;
        return user(
          [
            `Review the patch of ${args.correlation_id} (status ${task.status ?? 'none'}, worker ${task.worker ?? '?'}).`,
            `Patch event ${last.id} from ${last.from_agent}; artifact ${artifact ?? 'none'}${meta ? ` (sha256 ${meta.sha256}, ${meta.size_bytes} bytes)` : ''}.`,
            `1. Read it: palace://artifact/${artifact ?? '?'} (or palace_artifact_get) and check the sha256 matches.`,
            `2. Review it against the request's definition of done (palace://task/${args.correlation_id}).`,
            `3. Apply only as an explicit decision stated to the user: palace patch apply ${last.id} --agent ${args.agent}`,
            `4. Run the tests, then palace_event_ack { event_id: ${last.id}, from_agent: ${args.agent}, status: applied } (or failed, with the verbatim output).`,
            `5. File one drawer with the outcome (palace_add_drawer).`,
          ].join('\n'),
          `Review ${args.correlation_id}`,
        );
      }),
  );

  server.registerPrompt(
    'wake_up',
    {
      title: 'Wake up',
      description: "Start a session: the palace overview and what is new for you.",
      argsSchema: { agent: agent('Your own agent name') },
    },
    (args) =>
      guarded(async () => {
        const inbox = await computeInbox((q) => Promise.resolve(hub.logstream.list(q)), args.agent, undefined);
        return user(
          [
            `You are ${args.agent}. Call palace_wakeup for the palace overview (or read palace://wake-up/${args.agent}).`,
            inbox.text === '' ? `Nothing is open for you.` : inbox.text,
            `Subscribe to palace://inbox/${args.agent} to be told when something new arrives; read it with ?since_event_id=${inbox.cursor ?? ''} for what came after this.`,
          ].join('\n'),
          `Wake up ${args.agent}`,
        );
      }),
  );

  server.registerPrompt(
    'file_decision',
    {
      title: 'File a decision',
      description: 'Record a decision in memory (wing, room) so future sessions find it.',
      argsSchema: {
        decision: z.string().describe('What was decided'),
        why: z.string().describe('Why, and what was rejected'),
        agent: agent('Your own agent name'),
        wing,
        room,
      },
    },
    (args) =>
      guarded(() =>
        user(
          [
            `File this decision with palace_add_drawer:`,
            `- wing: ${args.wing || '<this project>'}, room: ${args.room || 'decisions'}, added_by: ${args.agent}`,
            `- content (verbatim):\nDecision: ${args.decision}\nWhy: ${args.why}`,
            `If it replaces an earlier decision, invalidate the old fact first (palace_kg_invalidate), then add the new one (palace_kg_add). Never file secrets or tokens.`,
          ].join('\n'),
          'File a decision',
        ),
      ),
  );
}
