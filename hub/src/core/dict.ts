// Records keyed by names that come from users or peers (wings, rooms, tags, agents, origins). A plain
// `{}` inherits from Object.prototype, so `counts['constructor']` is already a function and
// `record['__proto__'] = value` replaces the record's prototype; one level down
// (`taxonomy[wing][room] = n` with wing `__proto__`) it adds a property to every object in the
// process. These records have no prototype, and reads of parsed JSON go through own().

export type Dict<T> = Record<string, T>;

/** An empty record with no prototype: any string is just a key. */
export function dict<T>(): Dict<T> {
  return Object.create(null) as Dict<T>;
}

/** How many items fall under each key (an item may count under several, e.g. its tags). */
export function countBy<T>(items: Iterable<T>, keysOf: (item: T) => string | Iterable<string>): Dict<number> {
  const counts = dict<number>();
  for (const item of items) {
    const keys = keysOf(item);
    for (const key of typeof keys === 'string' ? [keys] : keys) counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

/** The value of an own property of `record`, never one inherited from its prototype. */
export function own<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}
