// Validity times of KG facts: a date (YYYY-MM-DD) or an ISO instant, turned into comparable UTC
// instants. A date-only start means that day's 00:00Z; a date-only end covers that whole day.

import { invalid } from '../errors.js';

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 86_400_000;

/** A validity time as given (normalized) and as a comparable instant. */
export interface When {
  text: string;
  ts: string;
}

function parseDate(field: string, value: string): Date {
  const date = new Date(DATE_ONLY.test(value) ? `${value}T00:00:00.000Z` : value);
  if (Number.isNaN(date.getTime()) || !/^\d{4}-\d{2}-\d{2}/.test(value))
    throw invalid(field, `${field} must be a date (YYYY-MM-DD) or an ISO 8601 instant, got '${value}'`);
  return date;
}

/**
 * Parses a validity time. `role` says how a date-only value becomes an instant: 'start' = 00:00Z,
 * 'end' = the next day's 00:00Z (exclusive end), 'as_of' = the last millisecond of that day.
 */
export function parseWhen(field: string, value: unknown, role: 'start' | 'end' | 'as_of'): When | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw invalid(field, `${field} must be a string`);
  const trimmed = value.trim();
  const date = parseDate(field, trimmed);
  if (!DATE_ONLY.test(trimmed)) return { text: date.toISOString().replace('.000Z', 'Z'), ts: date.toISOString() };
  const shift = role === 'start' ? 0 : role === 'end' ? DAY_MS : DAY_MS - 1;
  return { text: trimmed, ts: new Date(date.getTime() + shift).toISOString() };
}

/** One exact instant (a date-only value means 00:00Z), used where old and new must meet. */
export function parseInstant(field: string, value: unknown, now: Date): When {
  if (value === undefined || value === null || value === '') {
    const second = new Date(Math.floor(now.getTime() / 1000) * 1000);
    return { text: second.toISOString().replace('.000Z', 'Z'), ts: second.toISOString() };
  }
  if (typeof value !== 'string') throw invalid(field, `${field} must be a string`);
  const date = parseDate(field, value.trim());
  return { text: date.toISOString().replace('.000Z', 'Z'), ts: date.toISOString() };
}
