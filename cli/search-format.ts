// How `palace search` prints a hit for people: `path:line_start-line_end` (relative to the mined
// root), the fused score, the best-matching lines with the query terms highlighted (bold colour on
// a terminal, plain otherwise) and, with --full, the whole drawer.

import { terminalLine, terminalText } from '../hub/src/core/terminal-text.js';
import type { SearchHit } from '../hub/src/memory/drawers/memory.js';
import type { HitSnippet } from '../hub/src/search/snippet.js';

export interface HitFormat {
  /** Print the whole drawer instead of the snippet. */
  full: boolean;
  /** Highlight with ANSI escapes (a terminal that wants colour). */
  color: boolean;
}

const BOLD_YELLOW = '\u001b[1;33m';
const DIM = '\u001b[2m';
const RESET = '\u001b[0m';

/** The snippet's text with each mark wrapped in bold colour (or left plain). */
export function highlighted(snippet: HitSnippet, color: boolean): string {
  // Each piece of drawer text is made inert before our own colour codes go around it.
  if (!color || snippet.marks.length === 0) return terminalText(snippet.text);
  let out = '';
  let at = 0;
  for (const [s, e] of [...snippet.marks].sort((a, b) => a[0] - b[0])) {
    if (s < at) continue;
    out += terminalText(snippet.text.slice(at, s)) + BOLD_YELLOW + terminalText(snippet.text.slice(s, e)) + RESET;
    at = e;
  }
  return out + terminalText(snippet.text.slice(at));
}

/** Lines prefixed with their line numbers (when known), indented under the hit's head line. */
function numbered(text: string, first: number | null, width: number): string {
  return text
    .split('\n')
    .map((l, i) => `    ${first === null ? '' : `${String(first + i).padStart(width)} │ `}${l}`)
    .join('\n');
}

/** Where a hit comes from: `path:12-30`, the source file, or wing/room for a drawer filed by hand. */
export function hitWhere(h: SearchHit): string {
  if (h.location) return `${h.location.path}:${h.location.line_start}-${h.location.line_end}`;
  return h.source_file ?? `${h.wing}/${h.room}`;
}

export function hitText(h: SearchHit, i: number, format: HitFormat): string {
  const dim = (s: string): string => (format.color ? DIM + s + RESET : s);
  const rated = h.useful === false ? '  [rated not useful]' : h.useful === true ? '  [rated useful]' : '';
  const stale = h.stale ? `  [stale: the file changed since it was mined${h.mined ? ` ${h.mined.at}` : ''}; re-mine to refresh]` : '';
  const head = `[${i + 1}] ${terminalLine(hitWhere(h))}  score ${h.score.toFixed(3)}${rated}${stale}`;
  const meta = dim(terminalLine(`    ${h.wing}/${h.room}  ${h.drawer_id}  filed ${h.filed_at} by ${h.created_by}`));
  const snippet = h.snippet as SearchHit['snippet'] | undefined;
  if (format.full || !snippet) {
    const first = h.location?.line_start ?? null;
    const width = String((h.location?.line_end ?? 0) + 1).length;
    return `${head}\n${meta}\n${numbered(terminalText(h.content).replace(/\n+$/, ''), first, width)}`;
  }
  const width = String((snippet.line_start ?? 0) + snippet.text.split('\n').length).length;
  return `${head}\n${meta}\n${numbered(highlighted(snippet, format.color), snippet.line_start, width)}`;
}
