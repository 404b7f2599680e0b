// Email addresses as compplan stores them: an employee's (import) and a user's (sign-in).
// At most 254 characters, RFC 5321's limit on a path, which an address has to fit in to
// be sent to. It also keeps an address within PostgreSQL's B-tree entry limit (2,704
// bytes): both kinds are unique-index keys there, and a longer one would fail the insert
// with an index error instead of a message about the address.
import { z } from 'zod';

export const EMAIL_MAX_LENGTH = 254;

/** An email address of at most EMAIL_MAX_LENGTH characters, with one message for each. */
export function emailAddress(messages: { invalid: string; tooLong: string }) {
  return z
    .email({ message: messages.invalid })
    .max(EMAIL_MAX_LENGTH, { message: messages.tooLong });
}
