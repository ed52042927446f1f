// The dashboard's stylesheet has no accidental nesting. Browsers accept CSS nesting, so a rule whose
// closing brace was lost (a merge once dropped `.dep`'s) silently scopes every later rule inside it;
// nothing fails but the page. Only at-rules (@media, @supports, @keyframes, ...) may hold rules.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/** Selectors of rules opened inside another style rule (not inside an at-rule), with their line. */
function nestedRules(css: string): string[] {
  const text = css.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' ')).replace(/"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'/g, (s) => s.replace(/[^\n]/g, ' '));
  const stack: { atRule: boolean }[] = [];
  const found: string[] = [];
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '{') {
      const prelude = text.slice(start, i).split(';').pop()?.trim() ?? '';
      const parent = stack[stack.length - 1];
      if (parent && !parent.atRule) found.push(`line ${text.slice(0, i).split('\n').length}: ${prelude}`);
      stack.push({ atRule: prelude.startsWith('@') });
      start = i + 1;
    } else if (c === '}') {
      stack.pop();
      start = i + 1;
    }
  }
  if (stack.length > 0) found.push(`${stack.length} rule(s) never closed`);
  return found;
}

describe('renderer/src/styles.css', () => {
  it('has no rule nested in a style rule, and every brace closes', () => {
    expect(nestedRules(readFileSync('renderer/src/styles.css', 'utf8'))).toEqual([]);
  });

  it('the check finds a rule whose closing brace is missing', () => {
    expect(nestedRules('.a {\n  gap: 6px;\n\n.b {\n  gap: 1px;\n}\n')).toEqual(['line 4: .b', '1 rule(s) never closed']);
    expect(nestedRules('@media (max-width: 10px) {\n  .a { gap: 1px; }\n}\n.c { content: "{"; }')).toEqual([]);
  });
});
