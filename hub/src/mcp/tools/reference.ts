// The MCP reference (docs/tools.md), generated from the one registry so it cannot drift:
// every tool's name, title, whether it writes, whether the lean profile lists it, its description and
// its arguments as the zod schema states them; then the resource templates and the prompts. `npm run docs:tools` writes it; a unit test compares.

import { z } from 'zod';

import type { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';

import type { HubServices } from '../../services.js';
import { registerPrompts } from '../prompts/prompts.js';
import { registerResources } from '../resources/resources.js';
import { LEAN_TOOLS } from '../server/profiles.js';
import { TOOLS } from './registry.js';

export interface JsonSchema {
  type?: string | string[];
  description?: string;
  enum?: unknown[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  minimum?: number;
  maximum?: number;
}

/**
 * A schema's type in words. Joined with a plain `|` (cell() escapes it for the table once). A value
 * that may be one item or a list of them (anyOf [X, X[]]) names X once: `X, or a list of them`.
 */
export function typeOf(s: JsonSchema): string {
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(' | ');
  if (s.anyOf) {
    const [one, many, ...rest] = s.anyOf;
    if (one && many && rest.length === 0 && many.type === 'array' && many.items && typeOf(many.items) === typeOf(one))
      return `${typeOf(one)}, or a list of them`;
    return s.anyOf.map(typeOf).join(' | ');
  }
  if (s.type === 'array') {
    const item = s.items ? typeOf(s.items) : 'any';
    return item.includes(' | ') ? `(${item})[]` : `${item}[]`;
  }
  if (Array.isArray(s.type)) return s.type.join(' | ');
  return s.type ?? 'any';
}

function range(s: JsonSchema): string {
  if (s.minimum !== undefined && s.maximum !== undefined) return ` (${s.minimum}-${s.maximum})`;
  if (s.minimum !== undefined) return ` (≥ ${s.minimum})`;
  if (s.maximum !== undefined) return ` (≤ ${s.maximum})`;
  return '';
}

const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');

interface Documented {
  name: string;
  title?: string;
  description?: string;
  uriTemplate?: string;
  args?: z.ZodRawShape;
}

/**
 * The resource templates and prompts as the server factory registers them: registerResources and
 * registerPrompts run against a recorder (their callbacks, which need a hub, never run).
 */
export function surfaceDocs(): { resources: Documented[]; prompts: Documented[] } {
  const resources: Documented[] = [];
  const prompts: Documented[] = [];
  const recorder = {
    registerResource: (name: string, template: ResourceTemplate, meta: { title?: string; description?: string }) =>
      resources.push({ name, uriTemplate: template.uriTemplate.toString(), ...meta }),
    registerPrompt: (name: string, config: { title?: string; description?: string; argsSchema?: z.ZodRawShape }) =>
      prompts.push({ name, ...(config.title ? { title: config.title } : {}), ...(config.description ? { description: config.description } : {}), ...(config.argsSchema ? { args: config.argsSchema } : {}) }),
  } as unknown as McpServer;
  const noHub = undefined as unknown as HubServices;
  registerResources(recorder, noHub, () => Promise.reject(new Error('documentation only')));
  registerPrompts(recorder, noHub);
  return { resources, prompts };
}

/** The markdown reference of every tool the full profile serves, plus the lean profile's two. */
export function toolReference(): string {
  const out = [
    '# MCP tools',
    '',
    '<!-- Generated from hub/src/mcp/tools/registry.ts by `npm run docs:tools`; test/unit/tools-doc.test.ts checks it. Do not edit by hand. -->',
    '',
    `The hub serves ${TOOLS.length} tools at \`/mcp\` (profile \`full\`, the default). The \`lean\` profile`,
    `(\`/mcp?profile=lean\`, \`palace mcp --profile lean\`) lists the ${LEAN_TOOLS.size} marked "lean" plus \`palace_tools\` and`,
    '`palace_call`, which reach every other tool. On a read-only hub the tools that write are neither listed nor run.',
    'Errors come back as `isError` results whose JSON names a stable `code` (docs/http.md).',
    '',
    '| tool | writes | lean |',
    '| --- | --- | --- |',
    ...TOOLS.map((t) => `| [\`${t.name}\`](#${t.name}) ${cell(t.title)} | ${t.mutating ? 'yes' : 'no'} | ${LEAN_TOOLS.has(t.name) ? 'lean' : ''} |`),
    '',
  ];
  for (const t of TOOLS) {
    const schema = z.toJSONSchema(z.object(t.input), { unrepresentable: 'any' }) as JsonSchema;
    const required = new Set(schema.required ?? []);
    out.push(`## ${t.name}`, '', `**${t.title}**${t.mutating ? ' (writes)' : ''}. ${t.description}`, '');
    const props = Object.entries(schema.properties ?? {});
    if (props.length === 0) out.push('No arguments.', '');
    else
      out.push(
        '| argument | type | required | meaning |',
        '| --- | --- | --- | --- |',
        ...props.map(([name, p]) => `| \`${name}\` | ${cell(typeOf(p))}${range(p)} | ${required.has(name) ? 'yes' : ''} | ${cell(p.description ?? '')} |`),
        '',
      );
  }
  const { resources, prompts } = surfaceDocs();
  out.push(
    '# Resources',
    '',
    'Resource templates (`resources/templates/list`); `resources/read` with a URI filled in. Task and inbox resources can be',
    'subscribed (`resources/subscribe`): the hub sends `notifications/resources/updated` when their content changes (docs/mcp.md).',
    '',
    '| URI template | name | subscribe | meaning |',
    '| --- | --- | --- | --- |',
    ...resources.map(
      (r) =>
        `| \`${r.uriTemplate ?? ''}\` | ${cell(r.title ?? r.name)} | ${r.uriTemplate?.startsWith('palace://task/') || r.uriTemplate?.startsWith('palace://inbox/') ? 'yes' : ''} | ${cell(r.description ?? '')} |`,
    ),
    '',
    '# Prompts',
    '',
    'Prompts (`prompts/list`, `prompts/get`), which clients offer as slash commands. Arguments marked "completes" answer `completion/complete`.',
    '',
  );
  for (const p of prompts) {
    out.push(`## prompt ${p.name}`, '', `**${p.title ?? p.name}**. ${p.description ?? ''}`, '');
    const schema = z.toJSONSchema(z.object(p.args ?? {}), { unrepresentable: 'any' }) as JsonSchema;
    const required = new Set(schema.required ?? []);
    out.push(
      '| argument | required | completes | meaning |',
      '| --- | --- | --- | --- |',
      ...Object.entries(schema.properties ?? {}).map(
        ([name, a]) => `| \`${name}\` | ${required.has(name) ? 'yes' : ''} | ${Symbol.for('mcp.completable') in (p.args?.[name] ?? {}) ? 'completes' : ''} | ${cell(a.description ?? '')} |`,
      ),
      '',
    );
  }
  return out.join('\n');
}
