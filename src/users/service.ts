// The web application's users: what `compplan users …`, Settings → Users and the sign-in
// pages do, written once for all of them; each change recorded in the audit log in its
// transaction. New password hashes cost PASSWORD_HASHING unless the caller (a test's app or
// set-up, test/helpers/set-up.ts) gives a cheaper `hashing`.
import { type Kysely, sql } from 'kysely';
import { type Actor, CLI_ACTOR, type ManagementAction } from '../audit/entry.js';
import { recordAction, withRecordedAction } from '../audit/repository.js';
import type { Db } from '../db/connect.js';
import type { Database } from '../db/types.js';
import { fromBoolean } from '../db/values.js';
import { EMAIL_MAX_LENGTH, emailAddress } from '../email.js';
import { ManagementError } from '../errors.js';
import { newId } from '../ids.js';
import { findOrganizationBySlug, type Organization } from '../tenancy/organizations.js';
import {
  generateOneTimePassword,
  hashPassword,
  PASSWORD_HASHING,
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_LENGTH,
  type PasswordHashing,
  verifyDecoy,
  verifyPassword,
} from './password.js';
import {
  emailTaken,
  findCredentials,
  insertUser,
  listUsers,
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
  hashing: PasswordHashing = PASSWORD_HASHING,
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
    passwordHash: await hashPassword(oneTimePassword, hashing),
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
  hashing: PasswordHashing = PASSWORD_HASHING,
): Promise<{ user: User | null; attempted?: User }> {
  const credentials = await findCredentials(db, email);
  const refused = { user: null, ...(credentials && { attempted: credentials.user }) };
  // Never hashed: a password longer than any allowed one cannot be right.
  if (password.length > PASSWORD_MAX_LENGTH) return refused;
  if (!credentials) return verifyDecoy(password, hashing).then(() => refused);
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
  hashing: PasswordHashing = PASSWORD_HASHING,
): Promise<'changed' | 'same-as-current'> {
  const credentials = await findCredentials(db, user.email);
  if (credentials && (await verifyPassword(newPassword, credentials.passwordHash))) {
    return 'same-as-current';
  }
  const passwordHash = await hashPassword(newPassword, hashing);
  await updatePassword(db, user.id, passwordHash, new Date().toISOString());
  return 'changed';
}

async function organizationOf(db: Db, slug: string): Promise<Organization> {
  const organization = await findOrganizationBySlug(db, slug);
  if (!organization) throw new UserManagementError(`No organisation with slug "${slug}"`);
  return organization;
}

/** The organisation's users, by email. */
export async function listOrganizationUsers(db: Db, org: string): Promise<User[]> {
  return listUsers(db, (await organizationOf(db, org)).id);
}

/** Whom a change is for: a user of the organisation, by id (the web pages) or email (the CLI). */
export type UserTarget = { id: string } | { email: string };

const describeTarget = (target: UserTarget) =>
  'id' in target
    ? `No user ${target.id} in this organisation`
    : `No user with the email ${target.email} in this organisation`;

/**
 * Runs `change` on one user of the organisation, in a transaction in which the
 * organisation still has an owner afterwards, or nothing is changed. Two changes at once
 * cannot both take away a different last-but-one owner: PostgreSQL serialises them on the
 * organisation's row (FOR UPDATE), SQLite on its one writer; the owners are counted after
 * the change, by the statement that sees what committed before it.
 */
async function changeUser(
  db: Db,
  org: string,
  target: UserTarget,
  lastOwner: string,
  recorded: { action: ManagementAction; actor: Actor; details?: Record<string, unknown> },
  change: (trx: Kysely<Database>, user: User) => Promise<void>,
): Promise<User> {
  return db.transaction().execute(async (trx) => {
    const organization = await organizationOf(trx, org);
    // A lock on the organisation's row (PostgreSQL); SQLite runs one writer at a time.
    await sql`update organizations set id = id where id = ${organization.id}`.execute(trx);
    const users = await listUsers(trx, organization.id);
    const user = users.find((candidate) =>
      'id' in target
        ? candidate.id === target.id
        : candidate.email.toLowerCase() === target.email.trim().toLowerCase(),
    );
    if (!user) throw new UserManagementError(describeTarget(target));
    await change(trx, user);
    const owners = await trx
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('organization_id', '=', organization.id)
      .where('role', '=', 'owner')
      .executeTakeFirstOrThrow();
    if (Number(owners.n) === 0) throw new UserManagementError(lastOwner);
    await recordAction(trx, {
      organizationId: organization.id,
      ...recorded,
      target: user.id,
      details: { email: user.email, ...recorded.details },
    });
    return user;
  });
}

/** Gives a user another role; the last owner keeps theirs. */
export async function changeUserRole(
  db: Db,
  org: string,
  target: UserTarget,
  role: Role,
  actor: Actor = CLI_ACTOR,
): Promise<User> {
  const user = await changeUser(
    db,
    org,
    target,
    'The last owner cannot be made an administrator: make another user an owner first.',
    { action: 'user.role-changed', actor, details: { role } },
    async (trx, user) => {
      await trx.updateTable('users').set({ role }).where('id', '=', user.id).execute();
    },
  );
  return { ...user, role };
}

/** Removes a user: their sessions end with them, at once. The last owner stays. */
export async function removeUser(
  db: Db,
  org: string,
  target: UserTarget,
  actor: Actor = CLI_ACTOR,
): Promise<User> {
  return changeUser(
    db,
    org,
    target,
    'The last owner cannot be removed: make another user an owner first.',
    { action: 'user.removed', actor },
    async (trx, user) => {
      await trx.deleteFrom('sessions').where('user_id', '=', user.id).execute();
      await trx.deleteFrom('users').where('id', '=', user.id).execute();
    },
  );
}

/**
 * Gives a user a new one-time password (shown once, only its hash kept) to replace at
 * their next sign-in; their sessions end at once.
 */
export async function resetUserPassword(
  db: Db,
  org: string,
  target: UserTarget,
  actor: Actor = CLI_ACTOR,
  hashing: PasswordHashing = PASSWORD_HASHING,
): Promise<{ user: User; oneTimePassword: string }> {
  const oneTimePassword = generateOneTimePassword();
  const passwordHash = await hashPassword(oneTimePassword, hashing);
  const user = await changeUser(
    db,
    org,
    target,
    'The organisation has no owner.',
    { action: 'user.password-reset', actor },
    async (trx, user) => {
      await trx.deleteFrom('sessions').where('user_id', '=', user.id).execute();
      await trx
        .updateTable('users')
        .set({ password_hash: passwordHash, must_change_password: fromBoolean(true) })
        .where('id', '=', user.id)
        .execute();
    },
  );
  return { user, oneTimePassword };
}
