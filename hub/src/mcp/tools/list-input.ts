// Count-limited list arguments for tool schemas: the SDK's zod parse refuses a longer list (JSON-RPC
// -32602, naming the field and the limit) before the handler runs, and tools/list advertises maxItems.

import { z } from 'zod';

/** A list of `item` holding at most `max` values. */
export function listOf<T extends z.ZodType>(item: T, max: number): z.ZodArray<T> {
  return z.array(item).max(max, `takes at most ${max} values`);
}

/** The message of the issue that made a one-or-many union fail, so a too-long list says so. */
function unionMessage(issue: { errors?: unknown }): string | undefined {
  const nested = (Array.isArray(issue.errors) ? issue.errors.flat() : []) as {
    code?: string;
    message?: string;
  }[];
  return nested.find((i) => i.code === 'too_big')?.message;
}

/** One value or a list of at most `max` of them ("any of"). */
export function oneOrManyOf<T extends z.ZodType>(item: T, max: number) {
  return z.union([item, listOf(item, max)], { error: unionMessage });
}
