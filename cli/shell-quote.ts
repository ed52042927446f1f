// Quoting for every value the CLI writes into a shell script or a hook command line: a value is
// single-quoted for POSIX sh unless it is made only of characters no shell treats specially, so
// $(…), backticks, quotes and newlines in an agent name or path are never run.

const PLAIN = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** `value` as one sh word: unchanged when plain, else single-quoted (`'` written as `'\''`). */
export function shellQuote(value: string): string {
  if (PLAIN.test(value)) return value;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
