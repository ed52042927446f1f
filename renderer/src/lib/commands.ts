// Commands of the palette: what they are and how a query finds them. Pure.

export interface Command {
  id: string;
  title: string;
  group: 'Go to' | 'Actions' | 'Copy' | 'Desktop';
  /** Shortcut shown beside it, e.g. "g e". */
  keys?: string;
  /** Extra words it answers to. */
  keywords?: string;
  run(): void;
}

/** Commands whose title or keywords contain every word of the query, best matches first. */
export function searchCommands(commands: readonly Command[], query: string): Command[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return [...commands];
  const scored: { c: Command; score: number }[] = [];
  for (const c of commands) {
    const title = c.title.toLowerCase();
    const hay = `${title} ${c.keywords ?? ''} ${c.group.toLowerCase()}`;
    if (!words.every((w) => hay.includes(w))) continue;
    const first = words[0] as string;
    const score =
      (title.startsWith(first) ? 0 : title.includes(` ${first}`) ? 1 : title.includes(first) ? 2 : 3) * 100 +
      title.length;
    scored.push({ c, score });
  }
  return scored.sort((a, b) => a.score - b.score).map((s) => s.c);
}
