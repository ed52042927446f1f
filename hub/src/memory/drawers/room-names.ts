// The names of the rooms and drawer types memory itself gives meaning to: the diary, the decisions
// room, and a diary entry's type. A module of its own so memory.ts (its census tracks these rooms)
// and diary.ts (which files into them through Memory) need not import each other.

/** The room diary entries are filed in (in the agent's wing). */
export const DIARY_ROOM = 'diary';
/** The room decisions are filed in. */
export const DECISIONS_ROOM = 'decisions';
/** metadata.type of a diary entry. */
export const DIARY_TYPE = 'diary_entry';
