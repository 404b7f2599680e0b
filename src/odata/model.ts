// The feed's entity model for one key (docs/odata.md, "Entity types"): three entity types
// whose properties are the REST fields, plus, for Employee, one flat typed property for each
// column of the cycles the key may read (each part of a composite). Built per request from
// the column schemas the import keeps, so it describes exactly what the key may read: a
// scoped-out cycle's columns and a hidden column are not in it.

import {
  EMPLOYEE_FIELDS,
  type EmployeeField,
  namedColumns,
  type Reading,
} from '../columns/properties.js';
import type { CycleColumns } from '../columns/repository.js';
import { ApiError } from '../errors.js';

export type EdmType =
  | 'Edm.String'
  | 'Edm.Decimal'
  | 'Edm.Date'
  | 'Edm.Boolean'
  | 'Edm.DateTimeOffset';

export type { Reading };

export interface NativeProperty {
  kind: 'native';
  name: string;
  type: EdmType;
  nullable: boolean;
}

export interface ColumnProperty {
  kind: 'column';
  name: string;
  type: EdmType;
  nullable: true;
  /** The column's key, and the part's key for a part of a composite column. */
  key: string;
  part: string | null;
  reading: Reading;
  /** The column's display name (a part's: the column's name and the part's key). */
  description: string;
}

export type Property = NativeProperty | ColumnProperty;

export interface EntityType {
  name: 'MeritCycle' | 'Employee' | 'ExchangeRate';
  set: 'MeritCycles' | 'Employees' | 'ExchangeRates';
  key: readonly string[];
  properties: readonly Property[];
  byName: ReadonlyMap<string, Property>;
}

export interface FeedModel {
  MeritCycles: EntityType;
  Employees: EntityType;
  ExchangeRates: EntityType;
}

export type EntitySetName = keyof FeedModel;
export const ENTITY_SETS: readonly EntitySetName[] = ['MeritCycles', 'Employees', 'ExchangeRates'];

const native = (name: string, type: EdmType, nullable = false): NativeProperty => ({
  kind: 'native',
  name,
  type,
  nullable,
});

const MERIT_CYCLE_PROPERTIES = [
  native('id', 'Edm.String'),
  native('name', 'Edm.String'),
  native('startDate', 'Edm.DateTimeOffset'),
  native('endDate', 'Edm.DateTimeOffset'),
  native('createdDate', 'Edm.DateTimeOffset'),
  native('status', 'Edm.String'),
  native('currency', 'Edm.String'),
];

// The employee's own fields (EMPLOYEE_FIELDS, whose names no column property takes), typed.
const EMPLOYEE_FIELD_TYPES: Record<EmployeeField, EdmType> = {
  id: 'Edm.String',
  meritCycleId: 'Edm.String',
  email: 'Edm.String',
  firstName: 'Edm.String',
  lastName: 'Edm.String',
  preferredName: 'Edm.String',
  currencyCode: 'Edm.String',
  currencyName: 'Edm.String',
  eligibilityStatus: 'Edm.String',
};
const EMPLOYEE_PROPERTIES = EMPLOYEE_FIELDS.map((name) =>
  native(name, EMPLOYEE_FIELD_TYPES[name], name === 'preferredName'),
);

const EXCHANGE_RATE_PROPERTIES = [
  native('meritCycleId', 'Edm.String'),
  native('base', 'Edm.String'),
  native('currency', 'Edm.String'),
  native('rate', 'Edm.Decimal'),
];

function entityType(
  name: EntityType['name'],
  set: EntityType['set'],
  key: string[],
  properties: Property[],
): EntityType {
  return { name, set, key, properties, byName: new Map(properties.map((p) => [p.name, p])) };
}

const EDM_OF_READING: Record<Reading, EdmType> = {
  text: 'Edm.String',
  number: 'Edm.Decimal',
  currency: 'Edm.Decimal',
  date: 'Edm.Date',
  boolean: 'Edm.Boolean',
  json: 'Edm.String',
  mixed: 'Edm.String',
};

/** The model for a key that may read these cycles' columns. */
export function buildModel(cycles: readonly CycleColumns[]): FeedModel {
  const columns: ColumnProperty[] = namedColumns(cycles).map((column) => ({
    kind: 'column',
    ...column,
    type: EDM_OF_READING[column.reading],
    nullable: true,
  }));
  return {
    MeritCycles: entityType('MeritCycle', 'MeritCycles', ['id'], MERIT_CYCLE_PROPERTIES),
    Employees: entityType('Employee', 'Employees', ['id'], [...EMPLOYEE_PROPERTIES, ...columns]),
    ExchangeRates: entityType(
      'ExchangeRate',
      'ExchangeRates',
      ['meritCycleId', 'currency'],
      EXCHANGE_RATE_PROPERTIES,
    ),
  };
}

/**
 * The property `name` of `type`, as `$select`, `$filter` and `$orderby` name it: the one
 * lookup of a property by name, so that what the key may not read (a hidden column, absent
 * from its model) is refused alike everywhere: 400, as a property that does not exist.
 */
export function propertyNamed(type: EntityType, name: string, option: string): Property {
  const property = type.byName.get(name);
  if (!property) throw new ApiError(400, `${option}: ${type.name} has no property ${name}`);
  return property;
}
