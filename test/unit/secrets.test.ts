import { describe, expect, it } from 'vitest';

import { findSecret } from '../../hub/src/core/secrets.js';

// Test credentials are assembled from parts so this file never holds a literal secret.
const join = (...parts: string[]): string => parts.join('');
const AWS_KEY = join('AKIA', 'IOSFODNN7', 'EXAMPLE');
const GITHUB_TOKEN = join('ghp_', 'a1B2c3D4e5F6g7H8i9J0', 'k1L2m3N4o5P6q7R8');
const GITHUB_PAT = join('github_pat_', '11ABCDEFG0', 'abcdefghijklmnopqrstuvwxyz0123456789ABCD');
const OPENAI_KEY = join('sk-', 'proj-', 'Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z');
const OPENAI_LEGACY = join('sk-', 'Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb3dEf6h');
const ANTHROPIC_KEY = join('sk-ant-', 'api03-', 'Ab3dEf6hIj9kLm2nOp5qRs8t');
const PRIVATE_KEY = join(
  '-----BEGIN ',
  'RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\n-----END RSA ',
  'PRIVATE KEY-----',
);

describe('findSecret', () => {
  it.each([
    ['private key', PRIVATE_KEY],
    ['private key', join('-----BEGIN ', 'OPENSSH PRIVATE KEY-----')],
    ['private key', join('-----BEGIN ', 'PRIVATE KEY-----')],
    ['private key', join('-----BEGIN ', 'PGP PRIVATE KEY BLOCK-----')],
    ['AWS access key id', `aws key ${AWS_KEY} in the env`],
    ['GitHub token', `export GH=${GITHUB_TOKEN}`],
    ['GitHub token', GITHUB_PAT],
    ['GitLab token', join('glpat-', 'xY9zAbCdEfGhIjKlMnOp')],
    ['Slack token', join('xoxb-', '1234567890-abcdefghij')],
    ['Anthropic API key', ANTHROPIC_KEY],
    ['OpenAI API key', OPENAI_KEY],
    ['OpenAI API key', `key is ${OPENAI_LEGACY}.`],
    ['Stripe secret key', join('sk_live_', '4eC39HqLyjWDarjtT1zdp7dc')],
    ['Google API key', join('AIza', 'SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY')],
    ['npm token', join('npm_', 'abcdefghijklmnopqrstuvwxyz0123456789')],
    [
      'JSON Web Token',
      join(
        'eyJhbGciOiJIUzI1NiJ9',
        '.eyJzdWIiOiIxMjM0NTY3ODkwIn0',
        '.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
      ),
    ],
    ['bearer token', join('Authorization: Bearer ', 'abcdefghijklmnopqrstuvwxyz.0123')],
    ['credential assignment', join('DB_PASSWORD=', 's3cr3tP4ssw0rdValue')],
    ['credential assignment', join('password: "', 'Tr0ub4dorTr0ub4dor33', '"')],
    ['credential assignment', join('"api_key": "', 'a8f5f167f44f4964e6c998dee827110c', '"')],
    ['credential assignment', join('aws_secret_access_key = ', 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY')],
    ['credential assignment', join('{"clientSecret":"', 'Tr0ub4dorTr0ub4dor33', '"}')],
    ['credential assignment', join("{'password': '", 'Tr0ub4dorTr0ub4dor33', "'}")],
    ['credential assignment', join("'apiKey' => '", 'a8f5f167f44f4964e6c998dee827110c', "'")],
  ])('recognises a %s', (kind, text) => {
    expect(findSecret(text)?.kind).toBe(kind);
  });

  it('reports the line of the secret and never the secret itself', () => {
    const text = `Deploy notes\n\nStep 1: build\nStep 2: export AWS=${AWS_KEY}\nStep 3: done`;
    const finding = findSecret(text);
    expect(finding).toEqual({ kind: 'AWS access key id', line: 4 });
    expect(JSON.stringify(finding)).not.toContain(AWS_KEY);
  });

  it('finds a secret buried in a long ordinary text', () => {
    const filler = 'We discussed the migration plan at length. '.repeat(200);
    expect(findSecret(`${filler}\n${GITHUB_TOKEN}\n${filler}`)?.kind).toBe('GitHub token');
  });

  it.each([
    [
      'plain prose about passwords',
      'Rotate the password every 90 days and never share the token with anyone.',
    ],
    ['a placeholder without digits', 'api_key: "your-api-key-here-please"'],
    ['a short password assignment', 'password=hunter2'],
    ['a variable reference', 'const secret = process.env.SESSION_SECRET;'],
    ['a numeric setting named like a token', 'max_tokens: 40960000000000000'],
    ['a git commit hash', 'Fixed in commit 9fceb02d0ae598e95dc970b74767f19372d61af8.'],
    ['a sha256 checksum', 'sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08'],
    ['a UUID', 'request id 123e4567-e89b-12d3-a456-426614174000'],
    ['a public key header', '-----BEGIN PUBLIC KEY-----'],
    ['words that merely contain sk-', 'The risk-assessment-document-for-the-2026-roadmap-review is ready.'],
    ['a drawer id', 'see drawer_0123456789abcdef01234567'],
    ['an event id', 'evt_20260131T120000_0123456789ab'],
    ['the empty string', ''],
  ])('does not flag %s', (_what, text) => {
    expect(findSecret(text)).toBeUndefined();
  });
});
