// Issue 29: error text and CLI hints never hold a copy-pasteable destructive command (an agent once
// destroyed another tool's data by pasting the command its error text suggested). Every string and
// template literal in hub/src and cli/ is read with the TypeScript parser; any that reads like a
// destructive shell, git, SQL or palace command fails the test, unless the literal is code this
// program runs itself (an argument of a SQL or process call), never text shown to a person or agent.

import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

import ts from 'typescript';
import { describe, expect, it } from 'vitest';

import { REPO_ROOT } from '../helpers/hub.js';

/** Commands that destroy or discard data when pasted. */
export const DESTRUCTIVE: ReadonlyArray<[string, RegExp]> = [
  ['rm -r / rm -f', /\brm\s+-[a-zA-Z]*[rf]/],
  ['git reset --hard', /\bgit\s+reset\s+--hard/],
  ['git clean -f', /\bgit\s+clean\s+-[a-zA-Z]*f/],
  ['git push --force', /\bgit\s+push\b[^\n]*--force/],
  ['git checkout -- / restore', /\bgit\s+(checkout\s+--\s|restore\s)/],
  ['git branch -D', /\bgit\s+branch\s+-D/],
  ['DROP TABLE/DATABASE', /\bDROP\s+(TABLE|DATABASE|SCHEMA|INDEX)\b/],
  ['DELETE FROM', /\bDELETE\s+FROM\b/],
  ['TRUNCATE', /\bTRUNCATE\s+(TABLE\s+)?\w/],
  ['palace purge', /\bpalace\s+purge\b/],
  ['palace prune --confirm', /\bpalace\s+prune\b[^\n]*--confirm/],
  ['palace drawer delete', /\bpalace\s+drawer\s+delete\b/],
  ['palace hallway delete', /\bpalace\s+hallway\s+delete\b/],
  ['mkfs / dd', /\b(mkfs(\.\w+)?\s|dd\s+if=)/],
  ['chmod -R 777', /\bchmod\s+-R\s+777/],
];

/** Calls whose string arguments are code we run (SQL, processes), not text for a reader. */
const CODE_CALLS = new Set(['run', 'exec', 'prepare', 'stmt', 'query', 'pluck', 'git', 'execFileSync', 'execFile', 'spawn', 'spawnSync']);

function files(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...files(path));
    else if (entry.name.endsWith('.ts')) out.push(path);
  }
  return out;
}

function calleeName(node: ts.Node): string | undefined {
  for (let n: ts.Node | undefined = node.parent; n; n = n.parent) {
    if (ts.isCallExpression(n) || ts.isTaggedTemplateExpression(n)) {
      const callee = ts.isCallExpression(n) ? n.expression : n.tag;
      return ts.isPropertyAccessExpression(callee) ? callee.name.text : ts.isIdentifier(callee) ? callee.text : undefined;
    }
    if (ts.isBlock(n) || ts.isSourceFile(n)) return undefined;
  }
  return undefined;
}

/** Every text literal of a file that reads like a destructive command, with where it is. */
export function destructiveLiterals(path: string, text: string): string[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const hits: string[] = [];
  const visit = (node: ts.Node): void => {
    let literal: string | undefined;
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) literal = node.text;
    else if (ts.isTemplateExpression(node)) literal = [node.head.text, ...node.templateSpans.map((s) => s.literal.text)].join('…');
    if (literal !== undefined) {
      const found = DESTRUCTIVE.find(([, re]) => re.test(literal));
      if (found && !CODE_CALLS.has(calleeName(node) ?? '')) {
        const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
        hits.push(`${relative(REPO_ROOT, path)}:${line}: ${found[0]}: ${literal.slice(0, 120)}`);
      }
      if (!ts.isTemplateExpression(node)) return;
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return hits;
}

describe('error text and hints hold no destructive command', () => {
  it('the scanner catches what it must and spares what we run ourselves', () => {
    const sample = [
      "throw new HubError('x', 'broken; fix it with rm -rf ~/.palace');",
      'throw invalid("f", `stuck: run git reset --hard ${ref}`);',
      "ctx.out.note('try: palace purge --wing x');",
      "db.exec('DROP TABLE IF EXISTS t');",
      "await this.run(`DELETE FROM ${t} WHERE id = $1`);",
      "throw new HubError('x', 'pass --force to replace it');",
    ].join('\n');
    const hits = destructiveLiterals(join(REPO_ROOT, 'sample.ts'), sample);
    expect(hits.map((h) => h.split(': ')[1])).toEqual(['rm -r / rm -f', 'git reset --hard', 'palace purge']);
  });

  it('no literal in hub/src or cli/ suggests one', () => {
    const hits = [...files(join(REPO_ROOT, 'hub', 'src')), ...files(join(REPO_ROOT, 'cli'))].flatMap((path) =>
      destructiveLiterals(path, readFileSync(path, 'utf8')),
    );
    expect(hits).toEqual([]);
  });
});
