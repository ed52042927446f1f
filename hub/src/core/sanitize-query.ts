// Turns whatever an agent pasted into `query` into the question it is asking: short queries pass
// as they are; a pasted prompt or transcript is reduced to its last question-like sentence.

export const MAX_QUERY_CHARS = 250;

const BOILERPLATE = [
  /^\s*(you are|you're|as an ai|system:|assistant:|<\/?system|<\/?instructions|#+\s|```|---|\*\*\*)/i,
  /^\s*(always|never|do not|don't|must|important:|note:|rules?:)\b/i,
];

function sentences(text: string): string[] {
  return text
    .split(/\n+/)
    .flatMap((line) => line.split(/(?<=[.!?])\s+(?=[A-Z0-9"'(])/))
    .map((s) => s.replace(/^\s*(user|human|q|question)\s*:\s*/i, '').trim())
    .filter((s) => s.length > 0);
}

/** The query to embed, and whether it differs from what was given. */
export function sanitizeQuery(raw: string): { query: string; changed: boolean } {
  const trimmed = raw.trim().replace(/\s+/g, ' ');
  if (raw.trim().length <= MAX_QUERY_CHARS && !raw.includes('\n')) return { query: trimmed, changed: trimmed !== raw };
  const candidates = sentences(raw).filter((s) => !BOILERPLATE.some((re) => re.test(s)));
  const question = [...candidates].reverse().find((s) => s.endsWith('?'));
  let chosen = (question ?? candidates.at(-1) ?? trimmed).replace(/\s+/g, ' ').trim();
  if (chosen.length > MAX_QUERY_CHARS) chosen = chosen.slice(chosen.length - MAX_QUERY_CHARS).replace(/^\S*\s/, '');
  return { query: chosen, changed: chosen !== raw };
}
