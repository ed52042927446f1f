// Lint rules that keep the architecture honest: no process.env or console outside the
// config and log modules, named exports, kebab-case files, type-only imports, layers that point
// down (scripts/eslint-layers.js), and better-sqlite3 only in the modules that own a SQLite file.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import unicorn from 'eslint-plugin-unicorn';
import reactHooks from 'eslint-plugin-react-hooks';

import { palacePlugin } from './scripts/eslint-layers.js';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'bin/**', 'eslint.config.js', 'test/fixtures/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    plugins: { unicorn },
    rules: {
      'unicorn/filename-case': ['error', { case: 'kebabCase' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': [
        'error',
        { selector: 'ExportDefaultDeclaration', message: 'Use named exports.' },
        { selector: 'ExportAllDeclaration', message: 'No export *; name what you export.' },
      ],
    },
  },
  { files: ['*.config.ts', '**/*.config.ts'], rules: { 'no-restricted-syntax': 'off' } },
  // The dashboard: React hook rules; hooks live in useX.ts files (the React convention).
  { files: ['renderer/src/**/*.{ts,tsx}'], ...reactHooks.configs.flat['recommended-latest'] },
  { files: ['renderer/src/hooks/**/*.ts'], rules: { 'unicorn/filename-case': ['error', { case: 'kebabCase', ignore: ['^use[A-Z][A-Za-z]*\\.ts$'] }] } },
  // The tray's main process reads its environment only in main/config.ts and logs to files.
  {
    files: ['main/**/*.ts'],
    ignores: ['main/config.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'Read environment variables only in main/config.ts.' },
      ],
      'no-console': 'error',
    },
  },
  {
    files: ['hub/src/**/*.ts', 'cli/**/*.ts'],
    ignores: ['hub/src/config.ts', 'cli/config.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'Read environment variables only in config.ts.' },
      ],
    },
  },
  {
    files: ['hub/src/**/*.ts', 'cli/**/*.ts'],
    ignores: ['hub/src/log.ts', 'cli/output.ts'],
    rules: { 'no-console': 'error' },
  },
  // Layers point down; the hub client stays browser-safe; the CLI imports only its allowed hub modules.
  { files: ['hub/src/**/*.ts', 'cli/**/*.ts'], plugins: { palace: palacePlugin }, rules: { 'palace/layers': 'error' } },
  // better-sqlite3 only where a SQLite file is owned: the logstream store, the knowledge graph, the
  // memory journal, the memory feeds, search's term-association counts, the user_version and statement-cache helpers and the MemPalace reader (tests and
  // benchmarks are free).
  {
    files: ['hub/src/**/*.ts', 'cli/**/*.ts', 'main/**/*.ts', 'renderer/**/*.{ts,tsx}'],
    ignores: [
      'hub/src/logstream/**',
      'hub/src/kg/**',
      'hub/src/memory/drawers/memory-journal.ts',
      'hub/src/memory/replication/feed-store.ts',
      'hub/src/search/association-store.ts',
      'hub/src/sqlite-user-version.ts',
      'hub/src/sqlite-statements.ts',
      'hub/src/migrate/mempalace-reader.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: [{ name: 'better-sqlite3', message: 'Only the modules that own a SQLite file import better-sqlite3 (see eslint.config.js); go through their API.' }] },
      ],
    },
  },
  {
    files: ['hub/src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['node:*'], message: 'core/ is pure: no Node built-ins.' },
            { group: ['better-sqlite3', 'koa', '@koa/*', '@lancedb/*', 'onnxruntime-*', 'electron'], message: 'core/ is pure.' },
          ],
        },
      ],
    },
  },
);
