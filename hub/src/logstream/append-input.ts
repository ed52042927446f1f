// The raw inputs of the Logstream's writes, before validation: shared by the Logstream and coordination
// (which builds appends), so that neither imports the other for them.

import type { ArtifactMeta } from '../core/types.js';

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

export interface AckInput {
  event_id?: unknown;
  from_agent?: unknown;
  status?: unknown;
  body?: unknown;
  metadata?: unknown;
  /** `claimed` only: the lease (ms or a duration like 30m); default and bound from LeaseBounds. */
  lease_ms?: unknown;
}

export interface ArtifactInput {
  kind?: unknown;
  created_by?: unknown;
  content?: unknown;
  metadata?: unknown;
}

export type PatchInput = Omit<AppendInput, 'type' | 'status' | 'artifact_ids' | 'requires'> & { content?: unknown };

export type StoredArtifact = ArtifactMeta & { warnings?: string[] };
