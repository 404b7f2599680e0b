// What the audit log records (docs/security.md, "Audit log"): one entry for every request
// that carried a valid key, whatever its answer, and one for every management action.
// Never a secret and never employee data: a request's path without its query, counts of
// what an import changed, ids of what an action was done to.

/**
 * Who did a management action: a user of the web application (and the client address the
 * action came from), or the command line.
 */
export type Actor =
  | { kind: 'user'; userId: string; email: string; address: string }
  | { kind: 'cli' };

export const CLI_ACTOR: Actor = Object.freeze({ kind: 'cli' });

/** The management actions recorded, as the `action` of their entries. */
export const ACTIONS = [
  'key.created',
  'key.revoked',
  'key.rolled',
  'settings.changed',
  'user.created',
  'user.role-changed',
  'user.password-reset',
  'user.removed',
  'user.signed-in',
  'user.sign-in-failed',
  'user.sign-in-throttled',
  'webhook.added',
  'webhook.removed',
  'import',
  'cycle.removed',
] as const;
export type ManagementAction = (typeof ACTIONS)[number];

/** The action of every request entry. */
export const REQUEST_ACTION = 'api.request' as const;
export type AuditAction = ManagementAction | typeof REQUEST_ACTION;

/** Every action an entry may have: requests first, then the management actions. */
export const AUDIT_ACTIONS: readonly AuditAction[] = [REQUEST_ACTION, ...ACTIONS];

export const isAuditAction = (text: string): text is AuditAction =>
  (AUDIT_ACTIONS as readonly string[]).includes(text);

/** A request made with a valid key, as the pipeline's audit step records it. */
export interface RequestEntry {
  /** ms since the epoch, when the answer was sent. */
  at: number;
  organizationId: string;
  keyId: string;
  method: string;
  /** The route pattern, e.g. /merit-cycles/:meritCycleId/employees; null: no route matched. */
  route: string | null;
  /** The path without its query string (which may carry filters on employee fields). */
  path: string;
  meritCycleId: string | null;
  status: number;
  /** Employees in the answer; 0 when it carried none. */
  employees: number;
  /**
   * The column keys present in the answer, as columns-served.ts stores them; null when it
   * carried no employee.
   */
  columnsServed: string | null;
  /** The row slice the key read through (src/row-slices/); null: a key without one. */
  rowSliceId: string | null;
  clientAddress: string;
  userAgent: string | null;
  requestId: string;
}

/** A management action, written in the transaction of the action. */
export interface ActionEntry {
  organizationId: string;
  action: ManagementAction;
  actor: Actor;
  /** What it was done to: a key, user, webhook endpoint or merit cycle id. */
  target?: string | null;
  /** The key an action on a key was done to: the log's key filter finds it. */
  keyId?: string;
  /** Non-secret details: an import's counts, a setting's new value. */
  details?: Record<string, unknown>;
  at?: Date;
}

/** An entry as it is read back (the web page, `compplan audit list|export`). */
export interface AuditEntry {
  id: string;
  at: string;
  action: AuditAction;
  /** 'cli' or the user's email, for actions; null for requests. */
  actor: string | null;
  userId: string | null;
  keyId: string | null;
  target: string | null;
  method: string | null;
  route: string | null;
  path: string | null;
  meritCycleId: string | null;
  status: number | null;
  employees: number | null;
  /** The column keys the answer carried, sorted; null when it carried no employee. */
  columnsServed: string[] | null;
  /** The row slice a request was read through (src/row-slices/); null: none. */
  rowSliceId: string | null;
  clientAddress: string | null;
  userAgent: string | null;
  requestId: string | null;
  details: Record<string, unknown> | null;
}
