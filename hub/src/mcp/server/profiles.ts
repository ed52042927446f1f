// Tool profiles: which tools an MCP session lists. `full` (the default) is the spec's whole set;
// `lean` lists the everyday coordination and memory tools plus two that reach every other tool
// (palace_tools to discover, palace_call to run), so a session's tools/list stays under ~10 KB.

import { invalid } from '../../errors.js';

export const TOOL_PROFILES = ['full', 'lean'] as const;
export type ToolProfile = (typeof TOOL_PROFILES)[number];

/**
 * What the lean profile lists directly: the delegation loop and memory search/file. Reading the log
 * is palace_event_wait, which answers at once when events exist after the cursor (palace_event_list,
 * with its paging and time windows, is one palace_call away).
 */
export const LEAN_TOOLS: ReadonlySet<string> = new Set([
  'palace_event_append',
  'palace_event_wait',
  'palace_event_ack',
  'palace_search',
  'palace_add_drawer',
]);

/** Parses a profile name (query parameter, flag or environment value); undefined means `full`. */
export function parseProfile(value: string | undefined, field = 'profile'): ToolProfile {
  if (value === undefined || value.trim() === '') return 'full';
  const v = value.trim().toLowerCase();
  if ((TOOL_PROFILES as readonly string[]).includes(v)) return v as ToolProfile;
  throw invalid(field, `unknown tool profile '${value}'; use ${TOOL_PROFILES.join(' or ')}`);
}

/** The line the initialize instructions add about the active profile. */
export function profileInstructions(profile: ToolProfile, listed: number, total: number): string {
  return profile === 'lean'
    ? `Tool profile: lean (${listed} tools listed of ${total}). Every other palace tool (artifacts, patches, knowledge graph, diary, taxonomy, mining, curation, status) is one call away: palace_tools lists them (pass name for one tool's input schema), palace_call runs one by name with its arguments.`
    : `Tool profile: full (${total} tools). A lean profile that lists ${LEAN_TOOLS.size} everyday tools plus palace_tools/palace_call is at /mcp?profile=lean (stdio: palace mcp --profile lean).`;
}
