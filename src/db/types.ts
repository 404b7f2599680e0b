// Table types. Columns typed `Timestamp` hold an ISO 8601 UTC text in SQLite and a
// timestamptz in PostgreSQL: they are written as ISO strings and read back as either,
// and `toIso` (db/values.ts) is where the two meet. Booleans are 0/1 integers in SQLite.
// Change stamps (migration 0010) are integers, which PostgreSQL's bigint hands over as
// strings: read them through `Number`.
import type { ColumnType, Selectable } from 'kysely';

export type Timestamp = ColumnType<Date | string, string, string>;
export type Flag = ColumnType<boolean | number, boolean | number, boolean | number>;
/** A change stamp (src/changes/change.ts); the database's default, 0, when not written. */
export type ChangeStamp = ColumnType<number | string, number | string | undefined, number | string>;

export interface OrganizationsTable {
  id: string;
  slug: string;
  name: string;
  api_keys_enabled: Flag;
  created_at: Timestamp;
  /** The organisation's change counter: the stamp of its latest change. */
  change_seq: ChangeStamp;
  /** The newest stamp of a purged tombstone: tokens from before it get 410. */
  purged_change_seq: ChangeStamp;
  /** The column key (or `key/part`) holding an employee's manager's email (migration 0018). */
  manager_column: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface ApiKeysTable {
  id: string;
  organization_id: string;
  name: string;
  /** The first characters of the secret: enough to recognise a key, useless to use it. */
  prefix: string;
  /** SHA-256 of the whole secret, hex. The secret itself is never stored. */
  secret_hash: string;
  created_at: Timestamp;
  last_used_at: ColumnType<Date | string | null, string | null | undefined, string | null>;
  revoked_at: ColumnType<Date | string | null, string | null | undefined, string | null>;
  /** JSON array of the merit cycle ids the key reads; null: every cycle. */
  cycle_scope: ColumnType<string | null, string | null | undefined, string | null>;
  /** JSON array of the column keys removed from every employee it reads; null: none. */
  hidden_columns: ColumnType<string | null, string | null | undefined, string | null>;
  expires_at: ColumnType<Date | string | null, string | null | undefined, string | null>;
  /** SHA-256 of the secret before the last roll, valid until previous_secret_expires_at. */
  previous_secret_hash: ColumnType<string | null, string | null | undefined, string | null>;
  previous_secret_expires_at: ColumnType<
    Date | string | null,
    string | null | undefined,
    string | null
  >;
  /** The client address of the last use, as the server resolved it (TRUST_PROXY). */
  last_used_address: ColumnType<string | null, string | null | undefined, string | null>;
  /** JSON array of the CIDR ranges the key may be used from; null: any (migration 0012). */
  allowed_addresses: ColumnType<string | null, string | null | undefined, string | null>;
  /** JSON array of column types whose columns the key does not read; null: none. */
  hidden_column_types: ColumnType<string | null, string | null | undefined, string | null>;
  /** The row slice the key reads (migration 0018); null: every employee. */
  row_slice_id: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface MeritCyclesTable {
  id: string;
  organization_id: string;
  name: string;
  status: string;
  start_date: Timestamp;
  end_date: Timestamp;
  created_date: Timestamp;
  currency: string;
  /** JSON object text, exactly as loaded: currency code → rate from `currency`. */
  exchange_rates: string;
  /** The stamp of the last change of what the API serves of the cycle. */
  change_seq: ChangeStamp;
  /** The stamp of the import that created this cycle. */
  created_change_seq: ChangeStamp;
}

export interface MeritCycleEmployeesTable {
  id: string;
  organization_id: string;
  merit_cycle_id: string;
  email: string;
  /** Lower-cased email: re-imports match an employee by cycle and email, case-insensitively. */
  email_key: string;
  first_name: string;
  last_name: string;
  preferred_name: string | null;
  currency_code: string;
  currency_name: string;
  eligibility_status: string;
  /**
   * The employee as the API serves it, as JSON text, written whenever the row is. A page
   * of employees is then a concatenation of stored strings rather than 100 serializations.
   * Its columns are stored only here (migration 0004).
   */
  body: string;
  /** The stamp of the import that last wrote `body`. */
  change_seq: ChangeStamp;
  /** The manager's email, lower case, from the organisation's manager column (0018). */
  manager_key: ColumnType<string | null, string | null | undefined, string | null>;
  /**
   * The employee's line of the flat CSV, and the key of the layout it was written against
   * (migration 0020, src/export/flat-line.ts); null when it keeps none.
   */
  flat_key: ColumnType<string | null, string | null | undefined, string | null>;
  flat_line: ColumnType<string | null, string | null | undefined, string | null>;
}

/** The column schema of a merit cycle, kept by the import (migration 0013). */
export interface MeritCycleColumnsTable {
  merit_cycle_id: string;
  organization_id: string;
  /** JSON array of the cycle's columns (src/columns/schema.ts), ordered by key. */
  columns: string;
}

/** A merit cycle that was removed, remembered for CHANGE_RETENTION_DAYS (migration 0010). */
export interface RemovedMeritCyclesTable {
  id: string;
  organization_id: string;
  change_seq: ChangeStamp;
  removed_at: Timestamp;
}

/** An employee that was removed (`--prune`), remembered like a removed merit cycle. */
export interface RemovedEmployeesTable {
  id: string;
  organization_id: string;
  merit_cycle_id: string;
  change_seq: ChangeStamp;
  removed_at: Timestamp;
}

/** Server-wide secrets, made by a migration, so that every instance shares them. */
export interface ServerSecretsTable {
  name: string;
  value: string;
  created_at: Timestamp;
}

/** A user of the web application; belongs to one organisation (migration 0002). */
export interface UsersTable {
  id: string;
  organization_id: string;
  email: string;
  /** Lower-cased email, unique in the installation: sign-in finds a user by it. */
  email_key: string;
  role: 'owner' | 'admin';
  /** Versioned scrypt hash string (src/users/password.ts). */
  password_hash: string;
  /** Set while the password is the one-time password printed by `compplan users create`. */
  must_change_password: Flag;
  created_at: Timestamp;
  password_changed_at: ColumnType<Date | string | null, string | null | undefined, string | null>;
  /** The last sign-in with a password (migration 0014); null before the first. */
  last_signed_in_at: ColumnType<Date | string | null, string | null | undefined, string | null>;
}

/** A signed-in browser session (migration 0002). */
export interface SessionsTable {
  /** SHA-256 (hex) of the random session id the cookie carries. */
  id_hash: string;
  user_id: string;
  /** Synchronizer token that the session's form posts must carry. */
  csrf_token: string;
  created_at: Timestamp;
  last_seen_at: Timestamp;
  expires_at: Timestamp;
  /** What the next page shows once, sealed under the session id (migration 0008). */
  one_time_view: ColumnType<string | null, string | null | undefined, string | null>;
}

/** A form a session has sent, by the random id the page gave it (migration 0008). */
export interface SessionFormsTable {
  session_id_hash: string;
  form_id: string;
  sent_at: Timestamp;
}

/** One row (id 1): changes whenever a key may have stopped being valid (migration 0007). */
export interface ApiKeysRevisionTable {
  id: number;
  revision: number | string;
}

/** A merit cycle's employee count and last import (migration 0014; src/import/cycle-imports.ts). */
export interface MeritCycleImportsTable {
  merit_cycle_id: string;
  employee_count: ColumnType<number | string, number, number>;
  imported_at: NullableTimestamp;
  imported_by: string | null;
  employees: string | null;
}

/** An endpoint an organisation's events are sent to (migration 0011). */
export interface WebhookEndpointsTable {
  id: string;
  organization_id: string;
  url: string;
  /** JSON array of the event types it receives (ping always). */
  events: string;
  /** The whsec_ signing secret, sealed (src/sealed-text.ts) under a server secret. */
  sealed_secret: string;
  status: 'active' | 'failing' | 'disabled';
  created_at: Timestamp;
}

/** An event recorded in the transaction of the change it tells of: the outbox. */
export interface WebhookEventsTable {
  id: string;
  organization_id: string;
  type: string;
  /** The event's data, JSON text. */
  payload: string;
  created_at: Timestamp;
}

type NullableTimestamp = ColumnType<Date | string | null, string | null | undefined, string | null>;

/** One event's delivery to one endpoint; its id is the webhook-id header. */
export interface WebhookDeliveriesTable {
  id: string;
  event_id: string;
  endpoint_id: string;
  state: 'pending' | 'delivered' | 'failed' | 'cancelled';
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: Timestamp;
  lease_owner: ColumnType<string | null, string | null | undefined, string | null>;
  lease_expires_at: NullableTimestamp;
  last_attempt_at: NullableTimestamp;
  last_status: ColumnType<number | null, number | null | undefined, number | null>;
  last_response: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Timestamp;
}

type Nullable<T> = ColumnType<T | null, T | null | undefined, T | null>;

/** One entry of the audit log (migration 0012, src/audit/). */
export interface AuditEntriesTable {
  id: ColumnType<number | string, never, never>;
  at: Timestamp;
  organization_id: string;
  action: string;
  actor: Nullable<string>;
  user_id: Nullable<string>;
  key_id: Nullable<string>;
  target: Nullable<string>;
  method: Nullable<string>;
  route: Nullable<string>;
  path: Nullable<string>;
  merit_cycle_id: Nullable<string>;
  status: Nullable<number>;
  employees: Nullable<number>;
  client_address: Nullable<string>;
  user_agent: Nullable<string>;
  request_id: Nullable<string>;
  details: Nullable<string>;
  /** The column keys a request served (migration 0015; src/audit/columns-served.ts). */
  columns_served: Nullable<string>;
  /** The row slice a request was read through (migration 0018). */
  row_slice_id: Nullable<string>;
}

/** A key's slice of an organisation's employees (migration 0018, src/row-slices/). */
export interface RowSlicesTable {
  id: string;
  organization_id: string;
  /** Canonical JSON of the definition: one row per organisation and definition. */
  definition: string;
  /** The definition as people read it. */
  description: string;
  created_at: Timestamp;
}

/** An employee a slice reads in a cycle, in list order, with its change stamp. */
export interface RowSliceMembersTable {
  slice_id: string;
  merit_cycle_id: string;
  last_name: string;
  first_name: string;
  /** The employee's id. */
  id: string;
  change_seq: ChangeStamp;
  /** The employee's stored JSON text, as merit_cycle_employees.body. */
  body: string;
  /** Its flat CSV line and the line's key, as merit_cycle_employees has them. */
  flat_key: ColumnType<string | null, string | null | undefined, string | null>;
  flat_line: ColumnType<string | null, string | null | undefined, string | null>;
}

/** An employee that left a slice (or was removed while in it), remembered like a removal. */
export interface RowSliceDeparturesTable {
  slice_id: string;
  merit_cycle_id: string;
  employee_id: string;
  organization_id: string;
  change_seq: ChangeStamp;
  removed_at: Timestamp;
}

/** An organisation's running upload: a lease (migration 0017, src/import/uploads.ts). */
export interface UploadSlotsTable {
  organization_id: string;
  instance_id: string;
  host: string;
  pid: number;
  phase: string;
  done: ColumnType<number | string, number, number>;
  total: ColumnType<number | string | null, number | null, number | null>;
  started_by: string;
  started_at: ColumnType<number | string, number, number>;
  expires_at: ColumnType<number | string, number, number>;
}

/** A user's last refused upload's problems, as CSV (migration 0019, src/import/uploads.ts). */
export interface UploadProblemsTable {
  user_id: string;
  csv: string;
  expires_at: ColumnType<number | string, number, number>;
}

export interface Database {
  organizations: OrganizationsTable;
  api_keys: ApiKeysTable;
  api_keys_revision: ApiKeysRevisionTable;
  merit_cycles: MeritCyclesTable;
  merit_cycle_employees: MeritCycleEmployeesTable;
  merit_cycle_columns: MeritCycleColumnsTable;
  removed_merit_cycles: RemovedMeritCyclesTable;
  removed_employees: RemovedEmployeesTable;
  server_secrets: ServerSecretsTable;
  users: UsersTable;
  sessions: SessionsTable;
  session_forms: SessionFormsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  audit_entries: AuditEntriesTable;
  merit_cycle_imports: MeritCycleImportsTable;
  upload_slots: UploadSlotsTable;
  row_slices: RowSlicesTable;
  row_slice_members: RowSliceMembersTable;
  row_slice_departures: RowSliceDeparturesTable;
  upload_problems: UploadProblemsTable;
}

export type OrganizationRow = Selectable<OrganizationsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type MeritCycleRow = Selectable<MeritCyclesTable>;
export type EmployeeRow = Selectable<MeritCycleEmployeesTable>;
export type UserRow = Selectable<UsersTable>;
export type SessionRow = Selectable<SessionsTable>;
export type WebhookEndpointRow = Selectable<WebhookEndpointsTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;
