// What a key may read and until when, from what an administrator typed (`compplan keys
// create|roll` and Settings → Connections): checked whole before anything is written, each
// problem one line that names the option.
import ms from 'ms';
import { z } from 'zod';
import { parseRange } from '../address-ranges.js';
import type { Db } from '../db/connect.js';
import { KeyManagementError } from './errors.js';

/** Durations a person types: a number and a unit (`90d`, `24h`, `30m`, `1.5h`). */
const DURATION_SHAPE = /^\d+(\.\d+)? *[a-z]+$/i;
const DAY_MS = 86_400_000;
/** docs/api-keys.md: the old secret of a rolled key works for at most this long. */
export const MAX_GRACE_MS = 30 * DAY_MS;
export const DEFAULT_GRACE = '24h';
/** A key that expires within this is flagged in `keys list` and the web application. */
export const EXPIRING_SOON_MS = 7 * DAY_MS;
/** The most items a list of an option may hold. */
export const MAX_LIST_ITEMS = 100;
// Dates a person types for --expires-at: a calendar date (that day's start, UTC) or an
// ISO 8601 time with its offset; nothing that Date.parse would merely guess at.
const CALENDAR_DATE = z.iso.date();
const DATE_TIME = z.iso.datetime({ offset: true });

/**
 * A duration such as `90d`, parsed by `ms`; a bare number (which `ms` reads as
 * milliseconds) is refused, because nobody means 90 ms by `--expires-in 90`.
 */
export function parseDuration(text: string, option: string): number {
  const trimmed = text.trim();
  const value = DURATION_SHAPE.test(trimmed) ? ms(trimmed as ms.StringValue) : undefined;
  if (value === undefined || !Number.isFinite(value)) {
    throw new KeyManagementError(
      `${option} must be a number and a unit, such as 90d, 24h or 30m; got "${text}"`,
    );
  }
  return value;
}

/**
 * A comma-separated list (of `option`) as its items, trimmed. A list with nothing in it is
 * empty (what the option's own check refuses); an empty item among others (`salary,`,
 * `salary,,bonus`) is refused here, rather than dropped: a comma too many may be a column
 * key left out, and a key must never read more than was asked for. An item given twice is
 * refused too: the second may be a typo for what was meant.
 */
export function parseList(text: string, option: string): string[] {
  const items = text.split(',').map((item) => item.trim());
  if (items.every((item) => item.length === 0)) return [];
  if (items.some((item) => item.length === 0)) {
    throw new KeyManagementError(
      `${option} has an empty item in "${text}": remove the extra comma`,
    );
  }
  const twice = items.find((item, index) => items.indexOf(item) !== index);
  if (twice !== undefined) {
    throw new KeyManagementError(`${option} names ${twice} twice: give each once`);
  }
  return items;
}

/** When a new key expires: `expiresIn` from now, or at `expiresAt`; null: never. */
export function expiryOf(
  input: { expiresIn?: string | undefined; expiresAt?: string | undefined },
  now: number,
): Date | null {
  const { expiresIn, expiresAt } = input;
  if (expiresIn !== undefined && expiresAt !== undefined) {
    throw new KeyManagementError('Give --expires-in or --expires-at, not both');
  }
  let at: number;
  if (expiresIn !== undefined) {
    const duration = parseDuration(expiresIn, '--expires-in');
    if (duration <= 0) {
      throw new KeyManagementError(`--expires-in must be longer than nothing; got "${expiresIn}"`);
    }
    at = now + duration;
  } else if (expiresAt !== undefined) {
    const text = expiresAt.trim();
    if (CALENDAR_DATE.safeParse(text).success) at = Date.parse(`${text}T00:00:00.000Z`);
    else if (DATE_TIME.safeParse(text).success) at = Date.parse(text);
    else {
      throw new KeyManagementError(
        `--expires-at must be a date (YYYY-MM-DD, the start of that day in UTC) or an ISO 8601 time with its offset; got "${expiresAt}"`,
      );
    }
    if (at <= now) {
      throw new KeyManagementError(`--expires-at ${expiresAt} is in the past`);
    }
  } else {
    return null;
  }
  const date = new Date(at);
  if (Number.isNaN(date.getTime()) || date.getUTCFullYear() > 9999) {
    throw new KeyManagementError('The expiry is too far in the future (after the year 9999)');
  }
  return date;
}

/** How long a rolled key's old secret keeps working: 0 to 30 days, 24 h when not given. */
export function graceOf(text: string | undefined): number {
  const grace = parseDuration(text ?? DEFAULT_GRACE, '--grace');
  if (grace > MAX_GRACE_MS) {
    throw new KeyManagementError(`--grace must be at most 30 days; got "${text}"`);
  }
  return grace;
}

/**
 * The cycle scope from the ids given: undefined (not given) is every cycle; otherwise at
 * least one id, each a merit cycle of the organisation. Another organisation's cycle is
 * refused with the same words as one that does not exist.
 */
export async function cycleScopeOf(
  db: Db,
  organization: { id: string; slug: string },
  cycles: readonly string[] | undefined,
): Promise<string[] | null> {
  if (cycles === undefined) return null;
  if (cycles.length === 0) {
    throw new KeyManagementError(
      '--cycles needs at least one merit cycle id (leave it out for every cycle)',
    );
  }
  if (cycles.length > MAX_LIST_ITEMS) {
    throw new KeyManagementError(`--cycles takes at most ${MAX_LIST_ITEMS} merit cycles`);
  }
  const found = await db
    .selectFrom('merit_cycles')
    .select('id')
    .where('organization_id', '=', organization.id)
    .where('id', 'in', [...cycles])
    .execute();
  const known = new Set(found.map((row) => row.id));
  const unknown = cycles.filter((id) => !known.has(id));
  if (unknown.length > 0) {
    throw new KeyManagementError(
      `--cycles: no merit cycle ${unknown.map((id) => `"${id}"`).join(', ')} in ${organization.slug}`,
    );
  }
  return [...cycles].sort();
}

/**
 * The addresses a key may be used from: undefined (not given) is any address; otherwise at
 * least one IPv4 or IPv6 address or CIDR range, each checked, in the order given.
 */
export function allowedAddressesOf(entries: readonly string[] | undefined): string[] | null {
  if (entries === undefined) return null;
  if (entries.length === 0) {
    throw new KeyManagementError(
      '--allow-ips needs at least one address or CIDR range (leave it out for any address)',
    );
  }
  if (entries.length > MAX_LIST_ITEMS) {
    throw new KeyManagementError(`--allow-ips takes at most ${MAX_LIST_ITEMS} ranges`);
  }
  const malformed = entries.find((entry) => parseRange(entry) === undefined);
  if (malformed !== undefined) {
    const shown = malformed.length > 60 ? `${malformed.slice(0, 57)}…` : malformed;
    throw new KeyManagementError(
      `--allow-ips: "${shown}" is not an IP address or CIDR range, such as 203.0.113.0/24, 198.51.100.7 or 2001:db8::/32`,
    );
  }
  return [...entries];
}
