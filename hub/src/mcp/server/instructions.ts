// The agent rules every MCP client receives in the initialize result, so no per-client setup is needed.

export const AGENT_INSTRUCTIONS = `palace is the shared memory and coordination log for the agents on this project.
Identity: use one stable name <machine>-<harness> (e.g. laptop-claude) as from_agent/created_by on everything you write; never use another agent's name.
Events vs drawers: if another agent should act on something, append an event; if a future session should know it, file a drawer. A finished delegation produces both.
Delegation: requester appends task.request (status open, to_agent, correlation_id task_<slug>, body = goal, branch, base commit, definition of done). Worker acks it claimed before working, then palace_patch_submit (status ready) or a task.reply with blocked/failed and verbatim notes. Requester checks the artifact sha256, applies the patch only as an explicit decision stated to the user, runs the tests, acks applied or failed, then files one drawer with the outcome. Every claimed task ends applied, failed or blocked. Follow the request body exactly, not chat history.
Reading: resume with since_event_id = the last event id you processed (never by time). palace_event_wait long-polls; it returns timed_out true on timeout. Do not announce a watch you do not have.
Corrections are new events with status superseded; events are never edited.
Memory: before answering about past work, search the palace and quote stored content verbatim. When a fact changes, invalidate the old fact, then add the new one. Never file secrets or tokens.`;
