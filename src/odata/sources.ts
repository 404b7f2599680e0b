// Where each entity set's rows come from, in SQL, and the SQL of each property: the tenant
// and scope conditions are written here, once, and every query of the feed (pages, counts,
// filters) is built on them (repository.ts). Native properties are table columns (the
// employee list's key order is an index); column properties are read from the employee's
// stored JSON text, so a filter on one reads every employee of the cycles it covers
// (docs/odata.md, "Cost").
import { type RawBuilder, sql } from 'kysely';
import type { Dialect } from '../db/connect.js';
import { inCycleScope } from '../tenancy/cycles.js';
import type { ReadScope } from '../tenancy/scope.js';
import type { ColumnProperty, EntitySetName, Property } from './model.js';

type Sql = RawBuilder<unknown>;

export interface SortKey {
  /** The property, the SQL column its rows are ordered by, and that column in a page's rows. */
  name: string;
  column: string;
  field: string;
  descending: boolean;
  /**
   * A key of an $orderby other than the set's own orders: the property's SQL (its column,
   * or its value in the stored JSON), read into the page's rows as `field`.
   */
  expression?: Sql;
  /** Whether the key may be null (ordered first ascending, last descending: OData's rule). */
  nullable?: boolean;
}

export interface Source {
  /** `from … where …`: the rows the scope may read (of one cycle, for a navigation). */
  rows: Sql;
  /** The columns a page reads: what the entity is built from, and every sort key. */
  columns: Sql;
  /** The set's own order (the REST list's where there is one): keys that make a row unique. */
  nativeOrder: readonly SortKey[];
  /** The order by id alone, where the type has an id. */
  idOrder: readonly SortKey[] | null;
  /**
   * The first key of the set's own order when every row read shares its value (a cycle's
   * employees or rates): a position within it is the rest of the key (repository.ts).
   */
  fixedColumn?: string;
  expression(property: Property): Sql;
  /**
   * SQLite only: a decimal property's value as its decimal text, digit for digit (its
   * expression is a double), for decimal_compare (db/sqlite-functions.ts).
   */
  decimalText?(property: Property): Sql;
}

const NATIVE_COLUMNS: Record<EntitySetName, Record<string, string>> = {
  MeritCycles: {
    id: 'm.id',
    name: 'm.name',
    startDate: 'm.start_date',
    endDate: 'm.end_date',
    createdDate: 'm.created_date',
    status: 'm.status',
    currency: 'm.currency',
  },
  Employees: {
    id: 'e.id',
    meritCycleId: 'e.merit_cycle_id',
    email: 'e.email',
    firstName: 'e.first_name',
    lastName: 'e.last_name',
    preferredName: 'e.preferred_name',
    currencyCode: 'e.currency_code',
    currencyName: 'e.currency_name',
    eligibilityStatus: 'e.eligibility_status',
  },
  ExchangeRates: {
    meritCycleId: 'm.id',
    base: 'm.currency',
    currency: 'r.key',
    rate: 'r.value',
  },
};

const key = (name: string, column: string, field: string, descending = false): SortKey => ({
  name,
  column,
  field,
  descending,
});

/** The rows of `set` that the scope may read; of the cycle `meritCycleId` when given. */
export function sourceOf(
  set: EntitySetName,
  dialect: Dialect,
  scope: ReadScope,
  meritCycleId?: string,
): Source {
  const org = scope.organizationId;
  const natives = NATIVE_COLUMNS[set];
  const native = (property: Property) => {
    const column = natives[property.name];
    if (column === undefined) throw new Error(`${set} has no column for ${property.name}`);
    // The rate, in PostgreSQL, is the text json_each_text gives: compared as a number.
    if (set === 'ExchangeRates' && property.name === 'rate' && dialect === 'postgres') {
      return sql`(r.value)::numeric`;
    }
    return sql.ref(column);
  };
  const expression = (property: Property): Sql =>
    property.kind === 'native' ? native(property) : columnExpression(dialect, property);
  const decimalText =
    dialect === 'sqlite'
      ? (property: Property): Sql =>
          property.kind === 'native' ? SQLITE_RATE_TEXT : sqliteDecimalText(property)
      : undefined;
  switch (set) {
    case 'MeritCycles':
      return {
        rows: sql`from merit_cycles m where m.organization_id = ${org}${inCycleScope(scope, sql`m.id`)}${
          meritCycleId === undefined ? sql`` : sql` and m.id = ${meritCycleId}`
        }`,
        columns: sql`m.id, m.name, m.start_date, m.end_date, m.created_date, m.status, m.currency`,
        nativeOrder: [
          key('createdDate', 'm.created_date', 'created_date', true),
          key('id', 'm.id', 'id'),
        ],
        idOrder: [key('id', 'm.id', 'id')],
        expression,
        ...(decimalText && { decimalText }),
      };
    case 'Employees': {
      // The cycles the scope may read, by a subquery: the page still walks the employee
      // table's own key (merit_cycle_id, last_name, first_name, id) — or a sliced key's
      // members' key after the slice (tenancy/rows.ts), joined to the employees by it.
      const slice = scope.rowSlice;
      const ordered = slice === null ? 'e' : 's';
      const [cycle, last, first, id] =
        slice === null
          ? ['e.merit_cycle_id', 'e.last_name', 'e.first_name', 'e.id']
          : ['s.merit_cycle_id', 's.last_name', 's.first_name', 's.id'];
      const table =
        slice === null
          ? sql`merit_cycle_employees e where`
          : sql`row_slice_members s join merit_cycle_employees e
              on e.merit_cycle_id = s.merit_cycle_id and e.last_name = s.last_name
             and e.first_name = s.first_name and e.id = s.id
            where s.slice_id = ${slice.id} and`;
      return {
        rows: sql`from ${table} e.organization_id = ${org}
          and ${sql.ref(cycle)} in (select id from merit_cycles
            where organization_id = ${org}${inCycleScope(scope, sql`id`)})${
              meritCycleId === undefined ? sql`` : sql` and ${sql.ref(cycle)} = ${meritCycleId}`
            }`,
        columns: sql`e.merit_cycle_id, e.last_name, e.first_name, e.id, e.body`,
        nativeOrder: [
          key('meritCycleId', cycle, 'merit_cycle_id'),
          key('lastName', last, 'last_name'),
          key('firstName', first, 'first_name'),
          key('id', id, 'id'),
        ],
        idOrder: [key('id', ordered === 'e' ? 'e.id' : 's.id', 'id')],
        ...(meritCycleId !== undefined && { fixedColumn: cycle }),
        expression,
        ...(decimalText && { decimalText }),
      };
    }
    case 'ExchangeRates': {
      const rates =
        dialect === 'postgres'
          ? sql`cross join lateral json_each_text(m.exchange_rates::json) r`
          : sql`, json_each(m.exchange_rates) r`;
      return {
        rows: sql`from merit_cycles m ${rates} where m.organization_id = ${org}${inCycleScope(
          scope,
          sql`m.id`,
        )}${meritCycleId === undefined ? sql`` : sql` and m.id = ${meritCycleId}`}`,
        // The rate as the JSON number's text, digit for digit (SQLite's r.value is a double).
        columns:
          dialect === 'postgres'
            ? sql`m.id as merit_cycle_id, m.currency as base, r.key as currency, r.value as rate`
            : sql`m.id as merit_cycle_id, m.currency as base, r.key as currency, ${SQLITE_RATE_TEXT} as rate`,
        nativeOrder: [
          key('meritCycleId', 'm.id', 'merit_cycle_id'),
          key('currency', 'r.key', 'currency'),
        ],
        idOrder: null,
        ...(meritCycleId !== undefined && { fixedColumn: 'm.id' }),
        expression,
        ...(decimalText && { decimalText }),
      };
    }
  }
}

/** SQLite: an exchange rate as its JSON number's text (r.value is a double). */
const SQLITE_RATE_TEXT = sql`(case when r.type in ('integer', 'real') then m.exchange_rates -> r.fullkey else r.value end)`;

/**
 * SQLite: the decimal text of a number or currency column property, as stored (a JSON
 * number's text, or the decimal string); what is not a decimal decimal_compare reads as null.
 */
function sqliteDecimalText(property: ColumnProperty): Sql {
  const part = property.part === null ? sql`` : sql` || '.' || json_quote(${property.part})`;
  const path = sql`('$.columns.' || json_quote(${property.key}) || '.value'${part})`;
  const type = sql`json_type(e.body, ${path})`;
  if (property.reading === 'currency') {
    return sql`(case when ${type} = 'object' then (select case when c.type in ('integer', 'real') then e.body -> c.fullkey when c.type = 'text' then c.value end from json_each(e.body, ${path}) c limit 1) end)`;
  }
  return sql`(case when ${type} in ('integer', 'real') then e.body -> ${path} when ${type} = 'text' then e.body ->> ${path} end)`;
}

const DECIMAL_PATTERN = '^-?[0-9]+(\\.[0-9]+)?$';

/**
 * The SQL value of a column property of the employee `e`, read from its stored JSON, as
 * values.ts reads it: a decimal as a number (SQLite: a REAL, so beyond 15 significant
 * digits comparisons are approximate; PostgreSQL: numeric, exact), a date and a string as
 * text, a boolean as a boolean (SQLite: 1 and 0); a value that does not fit the type null.
 */
function columnExpression(dialect: Dialect, property: ColumnProperty): Sql {
  if (dialect === 'postgres') {
    const part = property.part === null ? sql`` : sql` -> ${property.part}::text`;
    const json = sql`(e.body::json -> 'columns' -> ${property.key}::text -> 'value'${part})`;
    const text = sql`(${json} #>> '{}')`;
    switch (property.reading) {
      case 'number':
        return sql`(case when json_typeof(${json}) in ('number', 'string') and ${text} ~ ${DECIMAL_PATTERN} then ${text}::numeric end)`;
      case 'currency':
        return sql`(select case when c.v ~ ${DECIMAL_PATTERN} then c.v::numeric end
          from json_each_text(case when json_typeof(${json}) = 'object' then ${json} end) as c(k, v) limit 1)`;
      case 'date':
        return sql`(case when json_typeof(${json}) = 'string' then ${text} end)`;
      case 'boolean':
        return sql`(case when json_typeof(${json}) = 'boolean' then ${text}::boolean end)`;
      case 'json':
        return sql`(case when json_typeof(${json}) <> 'null' then ${json}::text end)`;
      default:
        return sql`(case json_typeof(${json}) when 'string' then ${text} when 'null' then null else ${json}::text end)`;
    }
  }
  const part = property.part === null ? sql`` : sql` || '.' || json_quote(${property.part})`;
  const path = sql`('$.columns.' || json_quote(${property.key}) || '.value'${part})`;
  const type = sql`json_type(e.body, ${path})`;
  switch (property.reading) {
    case 'number':
      return sql`(case when ${type} in ('integer', 'real', 'text') then cast(e.body ->> ${path} as real) end)`;
    case 'currency':
      return sql`(case when ${type} = 'object' then cast((select c.value from json_each(e.body, ${path}) c limit 1) as real) end)`;
    case 'date':
      return sql`(case when ${type} = 'text' then e.body ->> ${path} end)`;
    case 'boolean':
      return sql`(case ${type} when 'true' then 1 when 'false' then 0 end)`;
    case 'json':
      return sql`(case when ${type} <> 'null' then e.body -> ${path} end)`;
    default:
      return sql`(case ${type} when 'text' then e.body ->> ${path} when 'null' then null else e.body -> ${path} end)`;
  }
}
