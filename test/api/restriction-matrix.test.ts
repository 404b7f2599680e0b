// One table of cases (docs/security.md, "One table of cases"): every restriction a key can
// carry × every path that reads data → the exact answer, on every database. "A promise
// holds on every path or it does not hold."
//
// ROWS are keys, each made once from its definition: the restrictions it is created with
// (cycles, hiddenColumns, hiddenColumnTypes, allowedAddresses, expiresIn, the row slice of
// rows and reportsTo, with the exact employees it reads), what happens to
// it afterwards (revoked, rolled within or past its grace) and where it is used from.
// `outcomeOf` turns a definition into what the key may read — a refusal (401, 403) or a
// Visibility (the cycles it reads, what it hides of each) — with no knowledge of paths.
// COLUMNS are read paths. Each reads its targets with the row's key and with the
// unrestricted reference key, and derives the expected answer from the reference's by the
// row's outcome: a refusal is the path's error form; a cycle out of scope is the 404 of a
// cycle that does not exist; a Visibility takes out of each answer what the key may not
// read, an employee outside its slice included (the 404 of an id that does not exist). The last column is the audit entry of every request the other columns make.
//
// A new restriction is a new ROWS entry (and, if it is a new kind, a case in outcomeOf and
// Visibility); a new path is a new COLUMNS entry. Not a new test file.
import { parse as parseCsv } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewKeyInput } from '../../src/api-keys/service.js';
import {
  type CreatedRestrictedKey,
  createApiKey,
  revokeApiKeyById,
  rollApiKeyById,
} from '../../src/api-keys/service.js';
import { listAuditEntries } from '../../src/audit/repository.js';
import type { DataSetInput } from '../../src/import/schema.js';
import { setManagerColumn } from '../../src/row-slices/manager-setting.js';
import { findOrganizationBySlug } from '../../src/tenancy/organizations.js';
import { addWebhookEndpoint } from '../../src/webhooks/service.js';
import { MATRIX_CYCLE, MATRIX_ORG, matrixDataSet } from '../fixtures/matrix-data-set.js';
import {
  columnsPath,
  compareEmployees,
  cyclePath,
  employeesPath,
  expectedEmployee,
  ISO_UTC_MS,
  MERIT_CYCLES,
  ratesPath,
} from '../helpers/api-expectations.js';
import { runCli } from '../helpers/cli.js';
import { assertConformsToContract } from '../helpers/openapi-contract.js';
import { nodeRequest } from '../helpers/raw-http.js';
import { scaledSchedule, startTestServer, TestClock, type TestServer } from '../helpers/server.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const HOUR = 3_600_000;
const ANNUAL = MATRIX_CYCLE.annual;
const MID_YEAR = MATRIX_CYCLE.midYear;
const CYCLES = [ANNUAL, MID_YEAR];
const FEED = '/odata/v4';
const BASIC = 'Basic realm="compplan"';
const UNAUTHORIZED = 'Missing or invalid API key';
const NOT_FROM_HERE = 'This API key may not be used from this address';
const NOT_FOUND = 'Merit cycle not found';
/** A property no data has: what a hidden column must be answered as in the feed. */
const UNKNOWN_PROPERTY = 'noSuchColumn';
/** An employee id no data has: what an employee outside a slice must be answered as. */
const NO_SUCH_EMPLOYEE = 'mce_70000000-0000-4000-8000-999999999999';
/** The employees of the matrix data set by number (test/fixtures/matrix-data-set.ts). */
const annual = (n: number) => `mce_70000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const midYear = (n: number) =>
  `mce_70000000-0000-4000-8000-1000000000${String(n).padStart(2, '0')}`;
const EMPLOYEE_IDS = [1, 2, 3, 4].map(annual).concat([1, 2].map(midYear));

// ---------------------------------------------------------------------------------------
// Restrictions → outcomes

type Restrictions = Omit<NewKeyInput, 'org' | 'name'>;

interface Row {
  name: string;
  restrictions: Restrictions;
  /** What is done to the key after it is made; `rolled-new` reads with the new secret. */
  lifecycle?: 'revoked' | 'rolled-in-grace' | 'rolled-new' | 'rolled-past-grace';
  /** The client address the row's requests come from; a fresh loopback one per cell when absent. */
  from?: string;
  /** A sliced key's employees, exactly (by id, over every cycle); absent: every employee. */
  members?: string[];
}

const ROWS: Row[] = [
  { name: 'unrestricted (the reference)', restrictions: {} },
  { name: 'cycle scope (--cycles)', restrictions: { cycles: [MID_YEAR] } },
  {
    name: 'hidden columns by key (--hide-columns basePay,employee)',
    restrictions: { hiddenColumns: ['basePay', 'employee'] },
  },
  {
    name: 'hidden columns by type (--hide-column-types currency)',
    restrictions: { hiddenColumnTypes: ['currency'] },
  },
  { name: 'expired (--expires-in 1h, 2h later)', restrictions: { expiresIn: '1h' } },
  {
    name: 'address allowlist (127.0.0.2 only, used from 127.0.0.1)',
    restrictions: { allowedAddresses: ['127.0.0.2'] },
    from: '127.0.0.1',
  },
  { name: 'revoked', restrictions: {}, lifecycle: 'revoked' },
  {
    name: 'rolled, old secret within its grace (scoped, hiding department)',
    restrictions: { cycles: [ANNUAL], hiddenColumns: ['department'] },
    lifecycle: 'rolled-in-grace',
  },
  {
    name: 'rolled, new secret (scoped, hiding department)',
    restrictions: { cycles: [ANNUAL], hiddenColumns: ['department'] },
    lifecycle: 'rolled-new',
  },
  { name: 'rolled, old secret after its grace', restrictions: {}, lifecycle: 'rolled-past-grace' },
  {
    name: 'row slice, one value (--rows "department = Sales")',
    restrictions: { rows: 'department = Sales' },
    members: [annual(1), annual(3)],
  },
  {
    name: 'row slice, values of two cycles (--rows "department in (Engineering, Finance)")',
    restrictions: { rows: 'department in (Engineering, Finance)' },
    members: [annual(2), annual(4), midYear(1)],
  },
  {
    name: 'row slice on a composite text part and a column (--rows "employee/jobTitle = Engineer and department in (Engineering, Sales)")',
    restrictions: { rows: 'employee/jobTitle = Engineer and department in (Engineering, Sales)' },
    members: [annual(2), annual(4)],
  },
  {
    name: 'row slice of a reporting line, two levels under (--reports-to Person2@matrixco.example)',
    restrictions: { reportsTo: 'Person2@matrixco.example' },
    members: [annual(3), annual(4)],
  },
  {
    name: 'row slice matching nobody (--rows "department = Marketing")',
    restrictions: { rows: 'department = Marketing' },
    members: [],
  },
  {
    name: 'row slice with cycle scope and a hidden column (--cycles annual --rows "department in (Engineering, Finance)" --hide-columns basePay)',
    restrictions: {
      cycles: [ANNUAL],
      rows: 'department in (Engineering, Finance)',
      hiddenColumns: ['basePay'],
    },
    members: [annual(2), annual(4)],
  },
];

interface SchemaColumn {
  key: string;
  name: string;
  type: string;
  parts: { key: string; type: string }[] | null;
}

/** What a key that is answered reads: its cycles, and what it hides of each column. */
interface Visibility {
  cycles: readonly string[];
  /** Whether the key reads the employee with this id (its cycle aside): its row slice. */
  reads(employeeId: string): boolean;
  /** Whether the whole column is hidden, and which of its parts are. */
  hides(column: SchemaColumn): { whole: boolean; parts: string[] };
}

type Outcome = { refused: { status: 401 | 403; message: string } } | { reads: Visibility };

/** The clock has moved past every expiry and grace of an hour when the table is read. */
function outcomeOf(row: Row, address: string): Outcome {
  const { restrictions: r, lifecycle } = row;
  if (r.expiresIn !== undefined || lifecycle === 'revoked' || lifecycle === 'rolled-past-grace') {
    return { refused: { status: 401, message: UNAUTHORIZED } };
  }
  if (r.allowedAddresses && !r.allowedAddresses.includes(address)) {
    return { refused: { status: 403, message: NOT_FROM_HERE } };
  }
  const types = r.hiddenColumnTypes ?? [];
  const members = row.members === undefined ? null : new Set(row.members);
  return {
    reads: {
      cycles: r.cycles ?? CYCLES,
      reads: (id) => members === null || members.has(id),
      hides: (column) => ({
        whole: (r.hiddenColumns ?? []).includes(column.key) || types.includes(column.type),
        parts: (column.parts ?? []).filter((part) => types.includes(part.type)).map((p) => p.key),
      }),
    },
  };
}

// ---------------------------------------------------------------------------------------
// Answers and how a path's answer is derived

interface Answer {
  status: number;
  /** JSON parsed (timestamps checked and masked), XML as text, CSV as rows of cells. */
  body: unknown;
  /** WWW-Authenticate. */
  challenge: string | null;
  requestId: string;
}
type Expected = Omit<Answer, 'requestId'>;

interface Context {
  server: TestServer;
  /** Each cycle's full column schema, as the reference reads it. */
  schemas: Map<string, SchemaColumn[]>;
  /** The reference's answer to each target, read once. */
  reference: Map<string, Answer>;
  /** The feed's answer to a query option naming UNKNOWN_PROPERTY, by option. */
  unknown: Map<string, Answer>;
  /** The feed's answer to the employee NO_SUCH_EMPLOYEE by key. */
  noSuchEmployee: Answer;
}

type Json = Record<string, unknown>;

function referenceBody(ctx: Context, target: string): unknown {
  const answer = ctx.reference.get(target);
  if (!answer) throw new Error(`no reference answer to ${target}`);
  return answer.body;
}
type Employee = { columns: Record<string, { value: unknown }> } & Json;

/** The column keys of a cycle the key reads, whole or in part, and their visible parts. */
function visibleColumns(ctx: Context, v: Visibility, cycle: string): SchemaColumn[] {
  return (ctx.schemas.get(cycle) ?? [])
    .filter((column) => !v.hides(column).whole)
    .map((column) => ({
      ...column,
      parts: column.parts?.filter((part) => !v.hides(column).parts.includes(part.key)) ?? null,
    }));
}

/** The feed's column names ("basePay", "employee/targetBonus") the key has: over its cycles. */
function visibleFeedColumns(ctx: Context, v: Visibility): Set<string> {
  const names = new Set<string>();
  for (const cycle of v.cycles) {
    for (const column of visibleColumns(ctx, v, cycle)) {
      if (column.parts) for (const part of column.parts) names.add(`${column.key}/${part.key}`);
      else names.add(column.key);
    }
  }
  return names;
}

/** Every column name the feed has for the reference: property name → "key" or "key/part". */
function feedColumnOf(ctx: Context): Map<string, string> {
  const xml = ctx.reference.get(`${FEED}/$metadata`)?.body as string;
  const map = new Map<string, string>();
  for (const match of xml.matchAll(
    /<Property Name="([^"]+)"[^>/]*>(?:(?!<\/Property>).)*<Annotation Term="Compplan.ColumnKey" String="([^"]+)"\/>/g,
  )) {
    map.set(match[1] ?? '', match[2] ?? '');
  }
  return map;
}

/** An employee as the key reads it: hidden columns and parts taken out. */
function employeeFor(ctx: Context, v: Visibility, cycle: string, employee: Employee): Employee {
  const columns: Employee['columns'] = {};
  const schema = new Map((ctx.schemas.get(cycle) ?? []).map((c) => [c.key, c]));
  for (const [key, cell] of Object.entries(employee.columns)) {
    const column = schema.get(key);
    if (!column) throw new Error(`column ${key} is not in the schema of ${cycle}`);
    const { whole, parts } = v.hides(column);
    if (whole) continue;
    if (parts.length > 0 && cell.value !== null && typeof cell.value === 'object') {
      const value = Object.fromEntries(
        Object.entries(cell.value as Json).filter(([part]) => !parts.includes(part)),
      );
      columns[key] = { ...cell, value };
    } else columns[key] = cell;
  }
  return { ...employee, columns };
}

/** A feed entity as the key reads it: the column properties it has not taken out. */
function entityFor(ctx: Context, v: Visibility, entity: Json): Json {
  const columnOf = feedColumnOf(ctx);
  const visible = visibleFeedColumns(ctx, v);
  return Object.fromEntries(
    Object.entries(entity).filter(([name]) => {
      const column = columnOf.get(name);
      return column === undefined || visible.has(column);
    }),
  );
}

const restError = (target: string, status: number, message: string): Json => ({
  timestamp: '<timestamp>',
  path: target.split('?')[0],
  message,
  statusCode: status,
});
const feedError = (status: number, message: string): Json => ({
  error: { code: String(status), message },
});

// ---------------------------------------------------------------------------------------
// Paths

interface Target {
  target: string;
  /** The merit cycle the target names; null when it names none. */
  cycle: string | null;
  errors: 'rest' | 'feed';
  parse: 'json' | 'ndjson' | 'csv' | 'auto';
  /** Read page by page (a REST list's nextCursor): the answer is the first page's with every page's data. */
  walk?: boolean;
  /** The answer the key gets when it may read the cycle (if any) and the reference's is 200. */
  derive(reference: Answer, v: Visibility, ctx: Context): Expected;
  /** What the audit entry counts of an answer: employees and the column keys served. */
  served(answer: Expected, ctx: Context): { employees: number; columns: string[] | null };
}

interface PathColumn {
  name: string;
  targets: Target[];
}

const nothingServed = () => ({ employees: 0, columns: null });
const sortedOrNull = (keys: Iterable<string>) => {
  const list = [...new Set(keys)].sort();
  return list.length === 0 ? null : list;
};
const same = ({ requestId: _id, ...answer }: Answer): Expected => answer;
const withBody = (reference: Answer, body: unknown): Expected => ({
  status: reference.status,
  body,
  challenge: reference.challenge,
});

/** A JSON answer whose `data` (or feed `value`) items the key reads only for its cycles. */
const listOf =
  (field: 'data' | 'value', cycleOf: (item: Json) => string) =>
  (reference: Answer, v: Visibility): Expected => {
    const body = reference.body as Json;
    const items = body[field] as Json[];
    return withBody(reference, {
      ...body,
      [field]: items.filter((item) => v.cycles.includes(cycleOf(item))),
    });
  };

const employeesServed = (answer: Expected) => {
  if (answer.status !== 200) return nothingServed();
  const body = answer.body as Json | Employee[];
  const items = (Array.isArray(body) ? body : (body.data as Employee[])).filter(
    (item) => !('removed' in item),
  );
  return {
    employees: items.length,
    columns: sortedOrNull(items.flatMap((item) => Object.keys(item.columns))),
  };
};

/**
 * The columns of the properties the entities carry (a part's property: its column), of the
 * cycle the path names, or of every cycle for the whole set.
 */
const entitiesServed = (cycle: string | null) => (answer: Expected, ctx: Context) => {
  if (answer.status !== 200) return nothingServed();
  const entities = (answer.body as { value: Json[] }).value;
  const columnOf = feedColumnOf(ctx);
  const keys = (cycle ? [cycle] : CYCLES)
    .flatMap((c) => ctx.schemas.get(c) ?? [])
    .map((c) => c.key);
  return {
    employees: entities.length,
    columns: sortedOrNull(
      entities.flatMap((entity) =>
        Object.keys(entity)
          .map((name) => columnOf.get(name)?.split('/')[0] ?? '')
          .filter((key) => keys.includes(key)),
      ),
    ),
  };
};

/** Employees of a cycle, as a REST page, a delta page or bulk NDJSON lines. */
const employeesTarget = (target: string, cycle: string, shape: 'page' | 'lines'): Target => ({
  target,
  cycle,
  errors: 'rest',
  parse: shape === 'lines' ? 'ndjson' : 'json',
  derive(reference, v, ctx) {
    const hide = (employees: Employee[]) =>
      employees
        .filter((e) => v.reads(e.id as string))
        .map((e) => ('removed' in e ? e : employeeFor(ctx, v, cycle, e)));
    if (shape === 'lines') return withBody(reference, hide(reference.body as Employee[]));
    const body = reference.body as Json;
    return withBody(reference, { ...body, data: hide(body.data as Employee[]) });
  },
  served: employeesServed,
});

/** The tokens of a CSV header cell: `columns.employee.targetBonus` → columns, employee, targetBonus. */
const tokensOf = (cell: string) => cell.split(/[._\s/]+/);

/** Whether a bulk CSV header cell carries (a part of) a column the key does not read. */
function cellHidden(cell: string, schema: SchemaColumn[], v: Visibility): boolean {
  const tokens = tokensOf(cell);
  return schema.some((column) => {
    const at = tokens.indexOf(column.key);
    if (at < 0) return false;
    const { whole, parts } = v.hides(column);
    return whole || parts.includes(tokens[at + 1] ?? '');
  });
}

/** Whether a header cell carries an amount (a currency column, or a currency part). */
function cellIsAmount(cell: string, schema: SchemaColumn[]): boolean {
  const tokens = tokensOf(cell);
  return schema.some((column) => {
    const at = tokens.indexOf(column.key);
    if (at < 0) return false;
    if (column.type === 'currency') return true;
    return (column.parts ?? []).some((p) => p.key === tokens[at + 1] && p.type === 'currency');
  });
}

// The bulk CSV in both shapes: flat (the default; docs/bulk-download.md) has one `currency`
// column beside the amounts, there only while an amount is; nested is the export's layout.
const csvTarget =
  (shape: 'flat' | 'nested') =>
  (cycle: string): Target => ({
    target: `${employeesPath(cycle)}/bulk?format=csv&bom=false&shape=${shape}`,
    cycle,
    errors: 'rest',
    parse: 'csv',
    // The CSV's layout is the bulk download's to choose: the key's CSV is the reference's
    // without the cells of the columns (and parts) it does not read, whatever they are named.
    derive(reference, v, ctx) {
      const rows = reference.body as string[][];
      const schema = ctx.schemas.get(cycle) ?? [];
      const header = rows[0] ?? [];
      const keep = header.map((cell) => !cellHidden(cell, schema, v));
      // Flat: the `currency` column stands before the first amount the key reads, or is
      // not there when it reads none.
      const order = header.map((_, index) => index).filter((index) => keep[index]);
      if (shape === 'flat') {
        const currency = header.indexOf('currency');
        const firstAmount = order.find((i) => cellIsAmount(header[i] ?? '', schema));
        order.splice(order.indexOf(currency), 1);
        if (firstAmount !== undefined) order.splice(order.indexOf(firstAmount), 0, currency);
      }
      const [, ...lines] = rows;
      return withBody(
        reference,
        [header, ...lines.filter((line) => v.reads(line[0] ?? ''))].map((row) =>
          order.map((index) => row[index] ?? ''),
        ),
      );
    },
    served(answer, ctx) {
      if (answer.status !== 200) return nothingServed();
      const [header = [], ...rows] = answer.body as string[][];
      const keys = (ctx.schemas.get(cycle) ?? []).map((c) => c.key);
      // A header without rows serves no value of its columns.
      if (rows.length === 0) return { employees: 0, columns: null };
      return {
        employees: rows.length,
        columns: sortedOrNull(header.flatMap(tokensOf).filter((token) => keys.includes(token))),
      };
    },
  });

const feedEmployeesTarget = (target: string, cycle: string | null): Target => ({
  target,
  cycle,
  errors: 'feed',
  parse: 'json',
  derive(reference, v, ctx) {
    const body = reference.body as { value: Json[] };
    return withBody(reference, {
      ...body,
      value: body.value
        .filter((entity) => v.cycles.includes(entity.meritCycleId as string))
        .filter((entity) => v.reads(entity.id as string))
        .map((entity) => entityFor(ctx, v, entity)),
    });
  },
  served: entitiesServed(cycle),
});

/** A feed query option naming a column property: answered as for an unknown one when the key has not it. */
const namingTarget = (option: string, property: string, query: string): Target => ({
  ...feedEmployeesTarget(`${FEED}/Employees?${query}`, null),
  derive(reference, v, ctx) {
    const column = feedColumnOf(ctx).get(property);
    if (column === undefined) throw new Error(`${property} is no column property of the feed`);
    if (visibleFeedColumns(ctx, v).has(column)) {
      return feedEmployeesTarget('', null).derive(reference, v, ctx);
    }
    const unknown = ctx.unknown.get(option);
    if (!unknown) throw new Error(`no answer to ${option} naming ${UNKNOWN_PROPERTY}`);
    return JSON.parse(JSON.stringify(same(unknown)).replaceAll(UNKNOWN_PROPERTY, property));
  },
});
const NAMING = [
  namingTarget('$select', 'basePay', '$select=id,meritCycleId,basePay'),
  namingTarget('$select', 'employee_targetBonus', '$select=id,meritCycleId,employee_targetBonus'),
  namingTarget('$select', 'hireDate', '$select=id,meritCycleId,hireDate'),
  namingTarget('$filter', 'basePay', '$filter=basePay%20gt%200'),
  namingTarget('$filter', 'employee_targetBonus', '$filter=employee_targetBonus%20gt%200'),
  namingTarget('$orderby', 'basePay', '$orderby=basePay%20desc,id'),
  namingTarget('$orderby', 'employee_targetBonus', '$orderby=employee_targetBonus,id'),
];
const UNKNOWN_QUERIES: [string, string][] = [
  ['$select', `$select=id,${UNKNOWN_PROPERTY}`],
  ['$filter', `$filter=${UNKNOWN_PROPERTY}%20gt%200`],
  ['$orderby', `$orderby=${UNKNOWN_PROPERTY}%20desc,id`],
];

/** The name of every feed column property the key has not: $metadata without them. */
function metadataFor(reference: Answer, v: Visibility, ctx: Context): Expected {
  const visible = visibleFeedColumns(ctx, v);
  const xml = (reference.body as string).replace(
    /<Property Name="[^"]+"[^>/]*>(?:(?!<\/Property>).)*<Annotation Term="Compplan.ColumnKey" String="([^"]+)"\/><\/Property>/g,
    (property, column: string) => (visible.has(column) ? property : ''),
  );
  return withBody(reference, xml);
}

const plain = (
  target: string,
  cycle: string | null,
  errors: 'rest' | 'feed',
  derive: Target['derive'] = same,
): Target => ({ target, cycle, errors, parse: 'auto', derive, served: nothingServed });

/** A REST list walked one employee a page by its cursors; its audit entry is the first page's. */
const walkedTarget = (target: string, cycle: string): Target => ({
  ...employeesTarget(target, cycle, 'page'),
  walk: true,
  served(answer) {
    if (answer.status !== 200) return nothingServed();
    const body = answer.body as Json;
    return employeesServed({
      ...answer,
      body: { ...body, data: (body.data as Json[]).slice(0, 1) },
    });
  },
});

/** The employees of the feed the key reads, as `${FEED}/Employees` answers it. */
function feedEmployees(ctx: Context, v: Visibility): Json[] {
  const all = ctx.reference.get(`${FEED}/Employees`) as Answer;
  return (feedEmployeesTarget('', null).derive(all, v, ctx).body as { value: Json[] }).value;
}

/** `$count` of the employees: the number the key reads, as text. */
const countTarget: Target = {
  ...plain(`${FEED}/Employees/$count`, null, 'feed'),
  derive: (reference, v, ctx) => withBody(reference, String(feedEmployees(ctx, v).length)),
};

/** A page of the feed in another order than its key's, with the count of all. */
const feedPageTarget: Target = {
  ...feedEmployeesTarget(
    `${FEED}/Employees?$orderby=lastName%20desc,id&$skip=1&$top=2&$count=true`,
    null,
  ),
  derive(reference, v, ctx) {
    const employees = feedEmployees(ctx, v).sort((a, b) =>
      a.lastName === b.lastName
        ? String(a.id) < String(b.id)
          ? -1
          : 1
        : String(a.lastName) < String(b.lastName)
          ? 1
          : -1,
    );
    return withBody(reference, {
      ...(reference.body as Json),
      '@odata.count': employees.length,
      value: employees.slice(1, 3),
    });
  },
};

/** One employee by key: an employee the key does not read is answered as one that does not exist. */
const byKeyTarget = (id: string): Target => ({
  target: `${FEED}/Employees('${id}')`,
  cycle: null,
  errors: 'feed',
  parse: 'json',
  derive(reference, v, ctx) {
    const entity = reference.body as Json;
    if (v.cycles.includes(entity.meritCycleId as string) && v.reads(id)) {
      return withBody(reference, entityFor(ctx, v, entity));
    }
    return JSON.parse(JSON.stringify(same(ctx.noSuchEmployee)).replaceAll(NO_SUCH_EMPLOYEE, id));
  },
  served: (answer, ctx) =>
    entitiesServed(null)(
      { ...answer, body: { value: answer.status === 200 ? [answer.body] : [] } },
      ctx,
    ),
});

const perCycle = (make: (cycle: string) => Target) => CYCLES.map(make);

/** A list naming no cycle, whose items (REST `data`, feed `value`) each belong to one. */
const listTarget = (target: string, errors: 'rest' | 'feed', cycleOf: (item: Json) => string) =>
  plain(target, null, errors, listOf(errors === 'rest' ? 'data' : 'value', cycleOf));

const COLUMNS: PathColumn[] = [
  {
    name: 'REST merit cycle list',
    targets: [listTarget(`${MERIT_CYCLES}?limit=100`, 'rest', (c) => c.id as string)],
  },
  { name: 'REST one merit cycle', targets: perCycle((c) => plain(cyclePath(c), c, 'rest')) },
  {
    name: 'REST employees page',
    targets: perCycle((c) => employeesTarget(`${employeesPath(c)}?limit=100`, c, 'page')),
  },
  { name: 'REST exchange rates', targets: perCycle((c) => plain(ratesPath(c), c, 'rest')) },
  {
    name: 'REST columns',
    targets: perCycle((c) =>
      plain(columnsPath(c), c, 'rest', (reference, v, ctx) =>
        withBody(reference, { ...(reference.body as Json), data: visibleColumns(ctx, v, c) }),
      ),
    ),
  },
  {
    name: 'merit cycles delta',
    targets: [listTarget(`${MERIT_CYCLES}/delta?limit=100`, 'rest', (c) => c.id as string)],
  },
  {
    name: 'REST employees walked by cursor, a page of one',
    targets: perCycle((c) => walkedTarget(`${employeesPath(c)}?limit=1`, c)),
  },
  {
    name: 'employees delta',
    targets: perCycle((c) => employeesTarget(`${employeesPath(c)}/delta?limit=100`, c, 'page')),
  },
  {
    name: 'employees delta walked by cursor, a page of one',
    targets: perCycle((c) => walkedTarget(`${employeesPath(c)}/delta?limit=1`, c)),
  },
  { name: 'OData service document', targets: [plain(`${FEED}/`, null, 'feed')] },
  { name: 'OData $metadata', targets: [plain(`${FEED}/$metadata`, null, 'feed', metadataFor)] },
  {
    name: 'OData MeritCycles',
    targets: [listTarget(`${FEED}/MeritCycles`, 'feed', (c) => c.id as string)],
  },
  { name: 'OData Employees', targets: [feedEmployeesTarget(`${FEED}/Employees`, null)] },
  {
    name: 'OData ExchangeRates',
    targets: [listTarget(`${FEED}/ExchangeRates`, 'feed', (r) => r.meritCycleId as string)],
  },
  {
    name: "OData MeritCycles('…')/Employees",
    targets: perCycle((c) => feedEmployeesTarget(`${FEED}/MeritCycles('${c}')/Employees`, c)),
  },
  { name: 'OData $select, $filter, $orderby naming a column', targets: NAMING },
  { name: 'OData Employees/$count', targets: [countTarget] },
  { name: 'OData $orderby, $skip, $top, $count=true', targets: [feedPageTarget] },
  { name: "OData Employees('…') by key", targets: EMPLOYEE_IDS.map(byKeyTarget) },
  {
    name: 'bulk NDJSON',
    targets: perCycle((c) => employeesTarget(`${employeesPath(c)}/bulk`, c, 'lines')),
  },
  { name: 'bulk CSV', targets: perCycle(csvTarget('flat')) },
  { name: 'bulk CSV (shape=nested)', targets: perCycle(csvTarget('nested')) },
];

// ---------------------------------------------------------------------------------------
// Reading

function parseBody(text: string, contentType: string, as: Target['parse']): unknown {
  const json = contentType.startsWith('application/json');
  if (as === 'ndjson' && !json) {
    return text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line));
  }
  if (as === 'csv' && !json) return parseCsv(text, { relaxColumnCount: false }) as string[][];
  if (json || as === 'json') {
    const body = JSON.parse(text) as unknown;
    if (body && typeof body === 'object' && 'timestamp' in body) {
      expect((body as Json).timestamp).toMatch(ISO_UTC_MS);
      (body as Json).timestamp = '<timestamp>';
    }
    if (body && typeof body === 'object' && typeof (body as Json).deltaToken === 'string') {
      (body as Json).deltaToken = '<token>';
    }
    return body;
  }
  return text;
}

async function read(server: TestServer, key: string, t: Target, from: string): Promise<Answer> {
  const first = await readOne(server, key, t.target, t, from);
  if (!t.walk || first.status !== 200) return first;
  let page = first.body as Json;
  const data = [...(page.data as Json[])];
  while (typeof page.nextCursor === 'string') {
    const next = `${t.target}&nextCursor=${encodeURIComponent(page.nextCursor)}`;
    const answer = await readOne(server, key, next, t, from);
    expect(answer.status, next).toBe(200);
    page = answer.body as Json;
    data.push(...(page.data as Json[]));
  }
  return { ...first, body: { ...page, data } };
}

async function readOne(
  server: TestServer,
  key: string,
  target: string,
  t: Target,
  from: string,
): Promise<Answer> {
  const response = await nodeRequest(server.url, target, {
    headers: { 'x-api-key': key },
    localAddress: from,
  });
  const headers = new Headers();
  for (const [name, value] of Object.entries(response.headers)) {
    if (typeof value === 'string') headers.set(name, value);
  }
  // Every answer must be one openapi.json declares, as server.request checks.
  assertConformsToContract({
    method: 'GET',
    target,
    status: response.status,
    headers,
    body: response.body,
  });
  return {
    status: response.status,
    body: parseBody(response.body, String(response.headers['content-type']), t.parse),
    challenge: response.headers['www-authenticate'] ?? null,
    requestId: String(response.headers['x-request-id']),
  };
}

function expectedAnswer(t: Target, outcome: Outcome, ctx: Context): Expected {
  const error = (status: number, message: string): Expected => ({
    status,
    body: t.errors === 'rest' ? restError(t.target, status, message) : feedError(status, message),
    challenge: status === 401 ? BASIC : null,
  });
  if ('refused' in outcome) return error(outcome.refused.status, outcome.refused.message);
  const v = outcome.reads;
  if (t.cycle !== null && !v.cycles.includes(t.cycle)) return error(404, NOT_FOUND);
  const reference = ctx.reference.get(t.target);
  if (!reference) throw new Error(`no reference answer to ${t.target}`);
  return t.derive(reference, v, ctx);
}

// ---------------------------------------------------------------------------------------
// The table

describe('restriction matrix: every restriction × every read path', () => {
  const clock = new TestClock();
  let server: TestServer;
  let ctx: Context;
  /** Each row's key: the secret it reads with and the key's id. */
  const keys = new Map<Row, { secret: string; id: string; sliceId: string | null }>();
  let referenceSecret = '';

  /** A loopback address of its own for each row and column: failed keys are limited per address. */
  const addressOf = (row: Row, column: number, round = 1) =>
    row.from ?? `127.${ROWS.indexOf(row) + 10}.${column + 1}.${round}`;

  beforeAll(async () => {
    server = await startTestServer({
      dataSets: [matrixDataSet()],
      now: clock.now,
      webhooks: { allowPrivateNetworks: ['127.0.0.0/8'] },
      webhookSchedule: scaledSchedule(0.001, 50),
    });
    const { db } = server.database;
    await setManagerColumn(server.database, MATRIX_ORG, 'manager');
    for (const row of ROWS) {
      const made: CreatedRestrictedKey = await createApiKey(
        db,
        { org: MATRIX_ORG, name: row.name, ...row.restrictions },
        clock.now(),
      );
      let secret = made.key;
      if (row.lifecycle === 'revoked') await revokeApiKeyById(db, made.id);
      if (row.lifecycle?.startsWith('rolled')) {
        const grace = row.lifecycle === 'rolled-past-grace' ? '1h' : '30d';
        const rolled = await rollApiKeyById(db, made.id, grace, clock.now());
        if (row.lifecycle === 'rolled-new') secret = rolled.key;
      }
      expect(made.rowSlice?.employees ?? null, row.name).toBe(row.members?.length ?? null);
      keys.set(row, { secret, id: made.id, sliceId: made.rowSlice?.id ?? null });
    }
    await server.app.apiKeys.confirm();
    // Past every expiry and grace of an hour; within every grace of 30 days.
    clock.advance(2 * HOUR);
    referenceSecret = keys.get(ROWS[0] as Row)?.secret ?? '';

    ctx = {
      server,
      schemas: new Map(),
      reference: new Map(),
      unknown: new Map(),
      noSuchEmployee: await read(
        server,
        referenceSecret,
        byKeyTarget(NO_SUCH_EMPLOYEE),
        '127.9.98.1',
      ),
    };
    for (const [index, column] of COLUMNS.entries()) {
      for (const t of column.targets) {
        ctx.reference.set(t.target, await read(server, referenceSecret, t, `127.9.${index}.1`));
      }
    }
    for (const cycle of CYCLES) {
      ctx.schemas.set(cycle, (referenceBody(ctx, columnsPath(cycle)) as Json).data as never);
    }
    for (const [option, query] of UNKNOWN_QUERIES) {
      const t = feedEmployeesTarget(`${FEED}/Employees?${query}`, null);
      ctx.unknown.set(option, await read(server, referenceSecret, t, '127.9.99.1'));
    }
  });
  afterAll(() => server?.close());

  it('the reference key reads everything the restrictions take away', () => {
    const data = matrixDataSet();
    for (const [target, answer] of ctx.reference) {
      expect(answer.status, target).toBe(200);
      expect(answer.challenge, target).toBeNull();
    }
    for (const cycle of data.meritCycles) {
      const id = cycle.id ?? '';
      const employees = (cycle.employees ?? []).map(expectedEmployee).sort(compareEmployees);
      const page = ctx.reference.get(`${employeesPath(id)}?limit=100`)?.body as Json;
      expect(page).toEqual({ data: employees, nextCursor: null });
      expect(ctx.reference.get(`${employeesPath(id)}/bulk`)?.body).toEqual(employees);
      const delta = ctx.reference.get(`${employeesPath(id)}/delta?limit=100`)?.body as Json;
      expect(delta).toEqual({ data: employees, nextCursor: null, deltaToken: '<token>' });
      // Walked a page of one: the same employees, in the same order.
      expect(ctx.reference.get(`${employeesPath(id)}?limit=1`)?.body).toEqual(page);
      expect(ctx.reference.get(`${employeesPath(id)}/delta?limit=1`)?.body).toEqual(delta);
      // Every column of the data set, each of its six types, in the schema.
      const keysOf = new Set(employees.flatMap((e) => Object.keys(e.columns as Json)));
      expect(ctx.schemas.get(id)?.map((c) => c.key)).toEqual([...keysOf].sort());
      for (const shape of ['flat', 'nested'] as const) {
        const target = csvTarget(shape)(id);
        const csv = ctx.reference.get(target.target)?.body as string[][];
        expect(csv).toHaveLength(employees.length + 1);
        expect(csv.slice(1).map((row) => row[0])).toEqual(employees.map((e) => e.id));
        expect(
          target.served({ ...same(ctx.reference.get(target.target) as Answer) }, ctx).columns,
        ).toEqual([...keysOf].sort());
      }
    }
    const types = [...ctx.schemas.values()]
      .flat()
      .flatMap((c) => [c.type, ...(c.parts ?? []).map((p) => `${c.type}/${p.type}`)]);
    for (const type of [
      'currency',
      'number',
      'text',
      'date',
      'boolean',
      'composite',
      'composite/currency',
      'composite/text',
    ]) {
      expect(types).toContain(type);
    }
    const cycles = (referenceBody(ctx, `${MERIT_CYCLES}?limit=100`) as { data: Json[] }).data;
    expect(cycles.map((c) => c.id).sort()).toEqual([...CYCLES].sort());
    // Every column and part is a feed property, named by its column key.
    expect([...feedColumnOf(ctx).values()].sort()).toEqual([
      'basePay',
      'bonus',
      'compaRatio',
      'department',
      'employee/jobTitle',
      'employee/targetBonus',
      'hireDate',
      'level',
      'manager',
      'remote',
    ]);
    const entities = (referenceBody(ctx, `${FEED}/Employees`) as { value: Json[] }).value;
    expect(entities).toHaveLength(data.meritCycles.flatMap((c) => c.employees ?? []).length);
    expect(entities.map((e) => e.id).sort()).toEqual([...EMPLOYEE_IDS].sort());
    expect(referenceBody(ctx, `${FEED}/Employees/$count`)).toBe(String(entities.length));
    expect(ctx.noSuchEmployee.status).toBe(404);
    for (const t of NAMING) {
      const { value } = referenceBody(ctx, t.target) as { value: Json[] };
      expect(value.length, t.target).toBeGreaterThan(0);
    }
    for (const [option, answer] of ctx.unknown) {
      expect(answer.status, option).toBe(400);
      expect(JSON.stringify(answer.body), option).toContain(UNKNOWN_PROPERTY);
    }
  });

  describe.each(ROWS)('$name', (row) => {
    const key = () => keys.get(row) ?? { secret: '', id: '', sliceId: null };
    /** The answer each target gave the row's key, and the address it was sent from. */
    const sent = new Map<Target, { answer: Answer; from: string }>();

    it.each(COLUMNS.map((column, index) => [column.name, column, index] as const))(
      '%s',
      async (_name, column, index) => {
        const from = addressOf(row, index);
        const outcome = outcomeOf(row, from);
        for (const t of column.targets) {
          const answered = await read(server, key().secret, t, from);
          sent.set(t, { answer: answered, from });
          const { requestId: _id, ...answer } = answered;
          expect(answer, t.target).toEqual(expectedAnswer(t, outcome, ctx));
        }
      },
    );

    it('compplan export employees (spawned)', async () => {
      const from = '127.0.0.1';
      const outcome = outcomeOf(row, from);
      const result = await runCli(
        ['export', 'employees', '--cycle', ANNUAL, '--format', 'ndjson', '--base-url', server.url],
        {
          env: { COMPPLAN_API_KEY: key().secret, COMPPLAN_BASE_URL: undefined },
          timeoutMs: 30_000,
        },
      );
      const expected = expectedAnswer(
        employeesTarget(`${employeesPath(ANNUAL)}/bulk`, ANNUAL, 'lines'),
        outcome,
        ctx,
      );
      if (expected.status === 200) {
        expect(result).toEqual({
          code: 0,
          signal: null,
          stdout: (expected.body as Json[]).map((line) => `${JSON.stringify(line)}\n`).join(''),
          stderr: '',
        });
        return;
      }
      // The export names the request that failed: the bulk download, or for a cycle it
      // may not read, the list it falls back to; and a hint where the fault is the caller's.
      const { message } = expected.body as { message: string };
      const path =
        expected.status === 404 ? employeesPath(ANNUAL) : `${employeesPath(ANNUAL)}/bulk`;
      const hint =
        {
          401: ' (check --key or COMPPLAN_API_KEY; is URL the right --base-url?)',
          404: ' (check --cycle; is URL the right --base-url?)',
        }[expected.status as 401 | 404] ?? '';
      expect({
        ...result,
        stderr: result.stderr.replace(/request id [0-9a-f-]{36}/, 'request id ID'),
      }).toEqual({
        code: 1,
        signal: null,
        stdout: '',
        stderr: `compplan: GET ${path}: ${expected.status} ${message} (request id ID)${hint.replace('URL', server.url)}\n`,
      });
    });

    it('the audit entry of each request: key, status, employees and columns served, merit cycle', async () => {
      // The requests the row's cells made; a request of its own for any they did not
      // (a run filtered to this case).
      const made: { t: Target; answer: Answer; from: string }[] = [];
      for (const [index, column] of COLUMNS.entries()) {
        for (const t of column.targets) {
          const from = addressOf(row, index, 2);
          const earlier = sent.get(t);
          made.push({
            t,
            ...(earlier ?? { from, answer: await read(server, key().secret, t, from) }),
          });
        }
      }
      await server.app.audit.flush();
      const organization = await findOrganizationBySlug(server.database.db, MATRIX_ORG);
      const entries = await listAuditEntries(
        server.database.db,
        organization?.id ?? '',
        {},
        { limit: 100_000 },
      );
      const byRequest = new Map(entries.map((entry) => [entry.requestId, entry]));
      const actual = made.map(({ answer }) => {
        const entry = byRequest.get(answer.requestId);
        return entry
          ? {
              keyId: entry.keyId,
              status: entry.status,
              employees: entry.employees,
              columnsServed: entry.columnsServed,
              meritCycleId: entry.meritCycleId,
              clientAddress: entry.clientAddress,
              rowSliceId: entry.rowSliceId,
            }
          : null;
      });
      const expected = made.map(({ t, from }) => {
        const outcome = outcomeOf(row, from);
        // A request without a valid key is not the key's: nothing is recorded for it.
        if ('refused' in outcome && outcome.refused.status === 401) return null;
        const answer = expectedAnswer(t, outcome, ctx);
        const served = t.served(answer, ctx);
        return {
          keyId: key().id,
          status: answer.status,
          employees: served.employees,
          columnsServed: served.columns,
          meritCycleId: t.cycle,
          clientAddress: from,
          rowSliceId: key().sliceId,
        };
      });
      expect(actual).toEqual(expected);
    });
  });
  // Last: it imports a change. A webhook event says what changed, never to whom it may be
  // shown: with every key of the table in existence, the payload carries no column and no
  // employee, only the cycle and counts.
  it('webhook events carry no per-key data: no column values, no employees', async () => {
    const receiver: WebhookReceiver = await startWebhookReceiver();
    try {
      const added = await addWebhookEndpoint(server.database.db, {
        org: MATRIX_ORG,
        url: receiver.url,
        allowPrivateNetworks: ['127.0.0.0/8'],
      });
      receiver.secret = added.secret;
      const changed: DataSetInput = matrixDataSet();
      const [annual] = changed.meritCycles;
      const [first] = annual?.employees ?? [];
      const columns = first?.columns as Record<string, { value: unknown }>;
      (columns.basePay as { value: unknown }).value = { USD: '999999.00' };
      await server.load(changed);
      const [event, ...more] = await receiver.waitFor(1);
      expect(more).toEqual([]);
      expect(event?.verified).toBe(true);
      expect(event?.violations).toEqual([]);
      expect(event?.body).toEqual({
        type: 'meritCycle.employees.changed',
        timestamp: expect.stringMatching(ISO_UTC_MS),
        data: { meritCycleId: ANNUAL, created: 0, updated: 1, removed: 0 },
      });
      const employees = matrixDataSet().meritCycles.flatMap((c) => c.employees ?? []);
      const secrets = [...employees.flatMap((e) => [e.id ?? '', e.email, e.lastName])];
      const columnKeys = [...ctx.schemas.values()].flat().map((c) => c.key);
      for (const text of [...secrets, ...columnKeys.map((k) => `"${k}"`), '999999', '101000.50']) {
        expect(event?.rawBody, text).not.toContain(text);
      }
    } finally {
      await receiver.close();
    }
  });
});
