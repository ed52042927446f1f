// Recognises content that looks like a credential, so it is never filed in memory. Reports the
// kind and line, never the secret itself.

interface SecretPattern {
  kind: string;
  pattern: RegExp;
}

const PATTERNS: readonly SecretPattern[] = [
  { kind: 'private key', pattern: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----/ },
  { kind: 'AWS access key id', pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/ },
  { kind: 'GitHub token', pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})\b/ },
  { kind: 'GitLab token', pattern: /\bglpat-[A-Za-z0-9_-]{20,}\b/ },
  { kind: 'Slack token', pattern: /\bxox[abprs]-[A-Za-z0-9-]{10,}\b/ },
  { kind: 'Anthropic API key', pattern: /\bsk-ant-[A-Za-z0-9_-]{20,}\b/ },
  { kind: 'OpenAI API key', pattern: /\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{32,}\b/ },
  { kind: 'Stripe secret key', pattern: /\b[rs]k_live_[A-Za-z0-9]{20,}\b/ },
  { kind: 'Google API key', pattern: /\bAIza[0-9A-Za-z_-]{35}\b/ },
  { kind: 'npm token', pattern: /\bnpm_[A-Za-z0-9]{36}\b/ },
  { kind: 'JSON Web Token', pattern: /\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\b/ },
  { kind: 'bearer token', pattern: /\bAuthorization:\s*Bearer\s+[A-Za-z0-9._~+/-]{20,}=*/i },
  {
    kind: 'credential assignment',
    // The name may be quoted (JSON, Python dicts) and the operator may be `=>` (PHP, Ruby).
    pattern: /\b[A-Za-z0-9_]*(?:api[_-]?key|secret|token|passw(?:or)?d)[A-Za-z0-9_]*["']?\s*(?:=>|[:=])\s*["']?(?=[A-Za-z0-9_/+=-]*\d)(?=[A-Za-z0-9_/+=-]*[A-Za-z])[A-Za-z0-9_/+=-]{16,}/i,
  },
];

export interface SecretFinding {
  kind: string;
  line: number;
}

/** The first credential-looking thing in `text`, or undefined. */
export function findSecret(text: string): SecretFinding | undefined {
  for (const { kind, pattern } of PATTERNS) {
    const m = pattern.exec(text);
    if (m) return { kind, line: text.slice(0, m.index).split('\n').length };
  }
  return undefined;
}
