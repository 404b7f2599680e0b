import type { Db } from '../db/connect.js';
import type { UserRow } from '../db/types.js';
import { fromBoolean, toBoolean, toIso } from '../db/values.js';

export const ROLES = ['owner', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** A user as the application sees one: never the password hash. */
export interface User {
  id: string;
  organizationId: string;
  email: string;
  role: Role;
  mustChangePassword: boolean;
  createdAt: string;
  /** The last sign-in with a password; null before the first. */
  lastSignedInAt: string | null;
}

export function toUser(row: UserRow): User {
  return {
    id: row.id,
    organizationId: row.organization_id,
    email: row.email,
    role: row.role,
    mustChangePassword: toBoolean(row.must_change_password),
    createdAt: toIso(row.created_at),
    lastSignedInAt: row.last_signed_in_at === null ? null : toIso(row.last_signed_in_at),
  };
}

/** Emails compare case-insensitively: sign-in and uniqueness use this key. */
export function emailKey(email: string): string {
  return email.trim().toLowerCase();
}

export interface NewUser {
  id: string;
  organizationId: string;
  email: string;
  role: Role;
  passwordHash: string;
  createdAt: string;
}

/** Inserts a user whose password is a one-time password (to change at first sign-in). */
export async function insertUser(db: Db, user: NewUser): Promise<void> {
  await db
    .insertInto('users')
    .values({
      id: user.id,
      organization_id: user.organizationId,
      email: user.email,
      email_key: emailKey(user.email),
      role: user.role,
      password_hash: user.passwordHash,
      must_change_password: fromBoolean(true),
      created_at: user.createdAt,
    })
    .execute();
}

export async function findUserById(db: Db, id: string): Promise<User | undefined> {
  const row = await db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toUser(row);
}

/** The user with this email and the stored password hash, for sign-in only. */
export async function findCredentials(
  db: Db,
  email: string,
): Promise<{ user: User; passwordHash: string } | undefined> {
  const row = await db
    .selectFrom('users')
    .selectAll()
    .where('email_key', '=', emailKey(email))
    .executeTakeFirst();
  return row && { user: toUser(row), passwordHash: row.password_hash };
}

export async function emailTaken(db: Db, email: string): Promise<boolean> {
  const row = await db
    .selectFrom('users')
    .select('id')
    .where('email_key', '=', emailKey(email))
    .executeTakeFirst();
  return row !== undefined;
}

export async function listUsers(db: Db, organizationId: string): Promise<User[]> {
  const rows = await db
    .selectFrom('users')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .orderBy('email_key')
    .execute();
  return rows.map(toUser);
}

/** Stores a password the user chose; the one-time password stops working. */
export async function updatePassword(
  db: Db,
  id: string,
  passwordHash: string,
  at: string,
): Promise<void> {
  await db
    .updateTable('users')
    .set({
      password_hash: passwordHash,
      must_change_password: fromBoolean(false),
      password_changed_at: at,
    })
    .where('id', '=', id)
    .execute();
}

/** A sign-in with a password, for Settings → Users. */
export async function noteSignIn(db: Db, id: string, at: string): Promise<void> {
  await db.updateTable('users').set({ last_signed_in_at: at }).where('id', '=', id).execute();
}
