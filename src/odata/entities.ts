// A page's rows as OData JSON entities (OData JSON Format 4.01, minimal metadata): each the
// selected properties in the model's order, as JSON text written here, so that a decimal
// goes out digit for digit as it was stored.
import { toIso } from '../db/values.js';
import type { Employee } from '../modules/employees/schema.js';
import type { EntitySetName, EntityType, Property } from './model.js';
import type { Row } from './repository.js';
import { columnValueJson } from './values.js';

type Natives = Record<string, unknown>;

/** The native property values of a row, by property name. */
function nativesOf(set: EntitySetName, row: Row): { natives: Natives; employee?: Employee } {
  switch (set) {
    case 'MeritCycles':
      return {
        natives: {
          id: row.id,
          name: row.name,
          startDate: toIso(row.start_date as string),
          endDate: toIso(row.end_date as string),
          createdDate: toIso(row.created_date as string),
          status: row.status,
          currency: row.currency,
        },
      };
    case 'Employees': {
      const employee = JSON.parse(String(row.body)) as Employee;
      return {
        employee,
        natives: {
          id: employee.id,
          meritCycleId: row.merit_cycle_id,
          email: employee.email,
          firstName: employee.firstName,
          lastName: employee.lastName,
          preferredName: employee.preferredName ?? null,
          currencyCode: employee.currencyCode.code ?? null,
          currencyName: employee.currencyCode.value ?? null,
          eligibilityStatus: employee.eligibilityStatus,
        },
      };
    }
    case 'ExchangeRates':
      return {
        natives: {
          meritCycleId: row.merit_cycle_id,
          base: row.base,
          currency: row.currency,
          // PostgreSQL hands the rate over as the JSON number's text, SQLite as a number.
          rate: row.rate,
        },
      };
  }
}

function nativeJson(property: Property, value: unknown, ieee754: boolean): string {
  if (value === null || value === undefined) return 'null';
  // A decimal: the JSON number's text as stored; a string under IEEE754Compatible=true.
  if (property.type === 'Edm.Decimal')
    return ieee754 ? JSON.stringify(String(value)) : String(value);
  return JSON.stringify(value);
}

/** A selected property and the text its value follows in an entity (`"name":`). */
export interface Selected {
  property: Property;
  label: string;
}

/**
 * The entity of a row as JSON text, with the properties `selected`; `ieee754`: decimals
 * as JSON strings (IEEE754Compatible=true), exact at any length.
 */
export function entityJson(
  type: EntityType,
  row: Row,
  selected: readonly Selected[],
  ieee754 = false,
): string {
  const { natives, employee } = nativesOf(type.set, row);
  const columns = employee?.columns ?? {};
  let json = '{';
  for (let index = 0; index < selected.length; index++) {
    const { property, label } = selected[index] as Selected;
    const value =
      property.kind === 'native'
        ? nativeJson(property, natives[property.name], ieee754)
        : columnValueJson(property, columns, ieee754);
    json += index === 0 ? `${label}${value}` : `,${label}${value}`;
  }
  return `${json}}`;
}

/** The model's properties that $select names, in the model's order (all when null). */
export function selectedProperties(type: EntityType, select: readonly string[] | null): Selected[] {
  const names = select === null ? null : new Set(select);
  return type.properties
    .filter((property) => names === null || names.has(property.name))
    .map((property) => ({ property, label: `${JSON.stringify(property.name)}:` }));
}

/** The sort key values of a row, as the skip token carries them. */
export function sortValues(row: Row, fields: readonly string[]): unknown[] {
  return fields.map((field) => {
    const value = row[field];
    return value instanceof Date ? value.toISOString() : value;
  });
}
