// Search-result previews: whole lines around the line that best matches the query, with the query
// terms marked; the hub's own `snippet` is used when it sends one. Pure functions, no I/O.

export interface Preview {
  text: string;
  /** [start, end) character offsets of query-term matches in `text`. */
  marks: Array<[number, number]>;
  /** 1-based number of the preview's first line in the drawer, when known. */
  lineStart: number | null;
}

function terms(query: string): string[] {
  return [...new Set(query.toLowerCase().match(/[\p{L}\p{N}_]{2,}/gu) ?? [])];
}

/** Offsets of every case-insensitive occurrence of the terms in `text`, merged and in order. */
export function markTerms(text: string, query: string): Array<[number, number]> {
  const lower = text.toLowerCase();
  const found: Array<[number, number]> = [];
  // A term matches at the start of a word only ("are" is not marked inside "middleware").
  const wordStart = (at: number): boolean => at === 0 || !/[\p{L}\p{N}_]/u.test(lower[at - 1] ?? '');
  for (const t of terms(query))
    for (let at = lower.indexOf(t); at >= 0; at = lower.indexOf(t, at + t.length)) if (wordStart(at)) found.push([at, at + t.length]);
  found.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  const merged: Array<[number, number]> = [];
  for (const [s, e] of found) {
    const last = merged.at(-1);
    if (last && s <= last[1]) last[1] = Math.max(last[1], e);
    else merged.push([s, e]);
  }
  return merged;
}

/**
 * At most `maxLines` whole lines of `content` centred on the line with the most query-term hits
 * (the first lines when nothing matches), each cut at `maxChars` on a word boundary.
 */
export function linePreview(content: string, query: string, lineStart: number | null = null, maxLines = 4, maxChars = 160): Preview {
  const lines = content.replace(/\r\n?/g, '\n').split('\n');
  const ts = terms(query);
  let best = 0;
  let bestScore = 0;
  lines.forEach((line, i) => {
    const l = line.toLowerCase();
    const score = ts.reduce((n, t) => n + (l.includes(t) ? 1 : 0), 0);
    if (score > bestScore) {
      best = i;
      bestScore = score;
    }
  });
  let from = Math.max(0, best - Math.floor((maxLines - 1) / 2));
  // Skip leading blank lines so the preview starts on text.
  while (from < best && (lines[from] ?? '').trim() === '') from++;
  const shown = lines.slice(from, from + maxLines).map((line) => {
    if (line.length <= maxChars) return line;
    const cut = line.lastIndexOf(' ', maxChars);
    return `${line.slice(0, cut > maxChars / 2 ? cut : maxChars)}…`;
  });
  while (shown.length > 1 && (shown.at(-1) ?? '').trim() === '') shown.pop();
  const text = shown.join('\n');
  return { text, marks: markTerms(text, query), lineStart: lineStart === null ? null : lineStart + from };
}

/** The last `segments` parts of a path (a readable, relative-looking name for an absolute path). */
export function shortPath(path: string, segments = 3): string {
  const parts = path.split(/[\\/]/).filter(Boolean);
  return parts.length <= segments ? parts.join('/') : `…/${parts.slice(-segments).join('/')}`;
}
