// The flat shape of a bulk download (docs/bulk-download.md, "For analysts"): each employee
// as one flat row of typed properties, named as the OData feed names them
// (columns/properties.ts), written as CSV (the default CSV) or as one JSON object a line
// (`format=ndjson&shape=flat`). A column only for what the cycle holds: the cycle's column
// schema, without what the key hides; the cycle's currency once, in a `currency` column
// before the first amount. The import writes each employee's CSV line with it too, once,
// when it stores the employee (flat-line.ts).
import {
  columnValueOf,
  EMPLOYEE_FIELDS,
  type EmployeeField,
  isDecimalReading,
  type NamedColumn,
  namedColumns,
  uniqueName,
} from '../columns/properties.js';
import type { CycleColumns } from '../columns/repository.js';
import { csvField, type FlattenableEmployee } from './csv.js';

/** One property of the flat row. */
export type FlatProperty =
  | { name: string; source: 'field'; field: EmployeeField }
  | { name: string; source: 'column'; column: NamedColumn }
  | { name: string; source: 'currency' };

/** The flat row of a cycle's employees. Plain data: it crosses to the conversion threads. */
export interface FlatLayout {
  meritCycleId: string;
  /** The cycle's currency, every amount's (the value of the `currency` property). */
  currency: string;
  properties: FlatProperty[];
}

/**
 * The flat row of the cycle `cycle` (its columns as the key reads them) for a key whose
 * readable cycles are `feedCycles` (readableColumnSchemas, as the feed's model is built
 * from them): each column named as the feed names it, read by this cycle's own type (a key
 * the feed reads as text because another cycle types it otherwise is still this cycle's
 * number here). The cycle's currency goes in one property, `currency` (`currency_2`, … when
 * a column's property has that name), before the first amount; none when the cycle has no
 * amount.
 */
export function flatLayout(cycle: CycleColumns, feedCycles: readonly CycleColumns[]): FlatLayout {
  const feedNames = new Map(
    namedColumns(feedCycles).map((column) => [JSON.stringify([column.key, column.part]), column]),
  );
  const taken = new Set<string>(EMPLOYEE_FIELDS);
  for (const column of feedNames.values()) taken.add(column.name);
  const properties: FlatProperty[] = EMPLOYEE_FIELDS.map((field) => ({
    name: field,
    source: 'field',
    field,
  }));
  let currencyPlaced = false;
  for (const own of namedColumns([cycle])) {
    const name = feedNames.get(JSON.stringify([own.key, own.part]))?.name ?? own.name;
    if (own.reading === 'currency' && !currencyPlaced) {
      properties.push({ name: uniqueName('currency', taken), source: 'currency' });
      currencyPlaced = true;
    }
    properties.push({ name, source: 'column', column: { ...own, name } });
  }
  return { meritCycleId: cycle.meritCycleId, currency: cycle.currency, properties };
}

/** The CSV header of the flat row. */
export const flatHeader = (layout: FlatLayout): string[] =>
  layout.properties.map((property) => property.name);

type Value = string | boolean | null;

/** An employee's own field, as the feed serves it. */
function fieldOf(employee: FlattenableEmployee, field: EmployeeField, meritCycleId: string): Value {
  switch (field) {
    case 'meritCycleId':
      return meritCycleId;
    case 'preferredName':
      return employee.preferredName ?? null;
    case 'currencyCode':
      return employee.currencyCode.code ?? null;
    case 'currencyName':
      return employee.currencyCode.value ?? null;
    default:
      return employee[field];
  }
}

/** A stored decimal as a JSON number's text: the same digits, leading zeros dropped. */
const jsonNumberOf = (decimal: string): string =>
  decimal.charCodeAt(decimal.startsWith('-') ? 1 : 0) === 0x30
    ? decimal.replace(/^(-?)0+(?=\d)/, '$1')
    : decimal;

/**
 * Writes employees as flat rows: `csv` a CSV line (RFC 4180, CRLF; decimals as stored,
 * booleans `true`/`false`, null an empty field), `ndjson` a JSON object and `\n` (decimals
 * as JSON numbers of the stored text, never through a double). Made once per download.
 */
export function flatRowWriter(
  layout: FlatLayout,
  form: 'csv' | 'ndjson',
): (employee: FlattenableEmployee) => string {
  const { meritCycleId, currency } = layout;
  const getters = layout.properties.map((property): ((employee: FlattenableEmployee) => Value) => {
    if (property.source === 'field') {
      const { field } = property;
      return (employee) => fieldOf(employee, field, meritCycleId);
    }
    if (property.source === 'currency') return () => currency;
    const { column } = property;
    return (employee) => columnValueOf(column, employee.columns);
  });
  if (form === 'csv') {
    return (employee) => {
      let line = '';
      for (let index = 0; index < getters.length; index++) {
        const cell = csvField((getters[index] as (e: FlattenableEmployee) => Value)(employee));
        line += index === 0 ? cell : `,${cell}`;
      }
      return `${line}\r\n`;
    };
  }
  const labels = layout.properties.map((property, index) => {
    const label = `${JSON.stringify(property.name)}:`;
    return index === 0 ? `{${label}` : `,${label}`;
  });
  const decimals = layout.properties.map(
    (property) => property.source === 'column' && isDecimalReading(property.column.reading),
  );
  return (employee) => {
    let line = '';
    for (let index = 0; index < getters.length; index++) {
      const value = (getters[index] as (e: FlattenableEmployee) => Value)(employee);
      line += labels[index];
      line +=
        value === null
          ? 'null'
          : decimals[index]
            ? jsonNumberOf(value as string)
            : JSON.stringify(value);
    }
    return `${line}}\n`;
  };
}
