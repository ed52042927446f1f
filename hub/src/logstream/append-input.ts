// The raw fields of an append, before validation: shared by the Logstream and coordination (which
// builds appends), so that neither imports the other for it.

/** Raw append fields as they arrive from a tool call or CLI flags; validated here. */
export interface AppendInput {
  type?: unknown;
  stream?: unknown;
  room?: unknown;
  from_agent?: unknown;
  to_agent?: unknown;
  correlation_id?: unknown;
  branch?: unknown;
  base_commit?: unknown;
  status?: unknown;
  body?: unknown;
  metadata?: unknown;
  artifact_ids?: unknown;
  /** task.request only: correlation ids this task waits for (stored in metadata.depends_on). */
  depends_on?: unknown;
  /** task.request only: capabilities its worker needs (stored in metadata.requires; identity.md). */
  requires?: unknown;
  /** patch.ready / task.reply: the claim attempt this write belongs to (stored in metadata.attempt). */
  attempt?: unknown;
}
