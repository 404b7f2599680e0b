// The web application's users: what `compplan users create` and the sign-in pages do.
import { type Actor, CLI_ACTOR } from '../../audit/entry.js';
import { withRecordedAction } from '../../audit/repository.js';
import type { Db } from '../../db/connect.js';
import { EMAIL_MAX_LENGTH, emailAddress } from '../../email.js';
import { ManagementError } from '../../errors.js';
import { newId } from '../../ids.js';
import { findOrganizationBySlug } from '../organizations/repository.js';
import {
  generateOneTimePassword,
  hashPassword,
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_LENGTH,
  verifyDecoy,
  verifyPassword,
} from './password.js';
import {
  emailTaken,
  findCredentials,
  insertUser,
  type Role,
  type User,
  updatePassword,
} from './repository.js';

export class UserManagementError extends ManagementError {
  override name = 'UserManagementError';
}

export interface CreatedUser {
  id: string;
  org: string;
  email: string;
  role: Role;
  /** Printed once; the user must replace it at first sign-in. Only its hash is kept. */
  oneTimePassword: string;
  createdAt: string;
}

const Email = emailAddress({
  invalid: 'is not an email address',
  tooLong: `has more than ${EMAIL_MAX_LENGTH} characters, the most an email address may have`,
});

export async function createUser(
  db: Db,
  input: { org: string; email: string; role: Role },
  actor: Actor = CLI_ACTOR,
): Promise<CreatedUser> {
  const organization = await findOrganizationBySlug(db, input.org);
  if (!organization) throw new UserManagementError(`No organisation with slug "${input.org}"`);
  const email = input.email.trim();
  const checked = Email.safeParse(email);
  if (!checked.success) {
    const quoted = input.email.length > 60 ? `${input.email.slice(0, 57)}…` : input.email;
    throw new UserManagementError(`"${quoted}" ${checked.error.issues[0]?.message}`);
  }
  if (await emailTaken(db, email)) {
    throw new UserManagementError(`A user with the email ${email} exists already`);
  }
  const oneTimePassword = generateOneTimePassword();
  const user = {
    id: newId('user'),
    organizationId: organization.id,
    email,
    role: input.role,
    passwordHash: await hashPassword(oneTimePassword),
    createdAt: new Date().toISOString(),
  };
  await withRecordedAction(
    db,
    (trx) => insertUser(trx, user),
    () => ({
      organizationId: organization.id,
      action: 'user.created',
      actor,
      target: user.id,
      details: { email, role: user.role },
    }),
  );
  return {
    id: user.id,
    org: organization.slug,
    email,
    role: user.role,
    oneTimePassword,
    createdAt: user.createdAt,
  };
}

/**
 * The user these credentials belong to (`user`), or null; `attempted`: the user of the
 * email when the password was wrong (whose organisation's audit log records the failed
 * sign-in). Takes as long for an unknown email.
 */
export async function authenticate(
  db: Db,
  email: string,
  password: string,
): Promise<{ user: User | null; attempted?: User }> {
  const credentials = await findCredentials(db, email);
  const refused = { user: null, ...(credentials && { attempted: credentials.user }) };
  // Never hashed: a password longer than any allowed one cannot be right.
  if (password.length > PASSWORD_MAX_LENGTH) return refused;
  if (!credentials) return verifyDecoy(password).then(() => refused);
  return (await verifyPassword(password, credentials.passwordHash))
    ? { user: credentials.user }
    : refused;
}

/** Why a new password is refused, in words for the person choosing it; null when it is fine. */
export function passwordProblem(
  password: string,
  confirmation: string,
  user: Pick<User, 'email'>,
): string | null {
  if (password.length < PASSWORD_MIN_LENGTH)
    return `Use at least ${PASSWORD_MIN_LENGTH} characters.`;
  if (password.length > PASSWORD_MAX_LENGTH)
    return `Use at most ${PASSWORD_MAX_LENGTH} characters.`;
  if (password.trim().toLowerCase() === user.email.toLowerCase())
    return 'Do not use your email address as your password.';
  if (password !== confirmation) return 'The two passwords do not match.';
  return null;
}

/**
 * Replaces the one-time password with one the user chose. The caller ends the user's
 * other sessions; the new password must differ from the current one.
 */
export async function chooseNewPassword(
  db: Db,
  user: User,
  newPassword: string,
): Promise<'changed' | 'same-as-current'> {
  const credentials = await findCredentials(db, user.email);
  if (credentials && (await verifyPassword(newPassword, credentials.passwordHash))) {
    return 'same-as-current';
  }
  await updatePassword(db, user.id, await hashPassword(newPassword), new Date().toISOString());
  return 'changed';
}
