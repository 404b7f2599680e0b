// The feed's entity model for one key (docs/odata.md, "Entity types"): three entity types
// whose properties are the REST fields, plus, for Employee, one flat typed property for each
// column of the cycles the key may read (each part of a composite). Built per request from
// the column schemas the import keeps, so it describes exactly what the key may read: a
// scoped-out cycle's columns and a hidden column are not in it.

import { byCodePoint } from '../columns/order.js';
import type { CycleColumns } from '../columns/repository.js';
import { ApiError } from '../errors.js';

export type EdmType =
  | 'Edm.String'
  | 'Edm.Decimal'
  | 'Edm.Date'
  | 'Edm.Boolean'
  | 'Edm.DateTimeOffset';

/**
 * How a column property's value is read from the stored column value: `text`, `number`,
 * `date`, `boolean`, `currency` as their types; `json`: a column of any other type, its
 * value as JSON text; `mixed`: a key whose type differs between cycles, a string as it is
 * and any other value as JSON text.
 */
export type Reading = 'text' | 'number' | 'date' | 'boolean' | 'currency' | 'json' | 'mixed';

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

const EMPLOYEE_PROPERTIES = [
  native('id', 'Edm.String'),
  native('meritCycleId', 'Edm.String'),
  native('email', 'Edm.String'),
  native('firstName', 'Edm.String'),
  native('lastName', 'Edm.String'),
  native('preferredName', 'Edm.String', true),
  native('currencyCode', 'Edm.String'),
  native('currencyName', 'Edm.String'),
  native('eligibilityStatus', 'Edm.String'),
];

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

const readingOfType = (type: string): Reading =>
  type === 'text' ||
  type === 'number' ||
  type === 'date' ||
  type === 'boolean' ||
  type === 'currency'
    ? type
    : 'json';

/** An OData simple identifier has at most 128 characters (CSDL, "SimpleIdentifier"). */
const MAX_IDENTIFIER = 128;

/**
 * The property name of a column key (or `key_part`): every character other than an ASCII
 * letter, digit or `_` becomes `_`, a name that does not start with a letter or `_` gets
 * one `_` in front, and it is cut to 128 characters (docs/odata.md, "Column properties").
 */
export function identifierOf(text: string): string {
  let name = text.replace(/[^A-Za-z0-9_]/g, '_');
  if (!/^[A-Za-z_]/.test(name)) name = `_${name}`;
  return name.slice(0, MAX_IDENTIFIER);
}

interface ColumnSlot {
  key: string;
  part: string | null;
  description: string;
  readings: Set<Reading>;
}

/** Every column (and composite part) of the readable cycles, by key then part. */
function columnSlots(cycles: readonly CycleColumns[]): ColumnSlot[] {
  const slots = new Map<string, ColumnSlot>();
  const note = (key: string, part: string | null, description: string, reading: Reading) => {
    const id = JSON.stringify([key, part]);
    const slot = slots.get(id);
    if (slot) slot.readings.add(reading);
    else slots.set(id, { key, part, description, readings: new Set([reading]) });
  };
  for (const cycle of cycles) {
    for (const column of cycle.columns) {
      if (column.type === 'composite') {
        for (const part of column.parts ?? []) {
          note(column.key, part.key, `${column.name}: ${part.key}`, readingOfType(part.type));
        }
      } else {
        note(column.key, null, column.name, readingOfType(column.type));
      }
    }
  }
  // A key that is a composite in one cycle and of another type in another: its whole
  // value, as text, besides the parts.
  const composites = new Set([...slots.values()].filter((s) => s.part !== null).map((s) => s.key));
  for (const slot of slots.values()) {
    if (slot.part === null && composites.has(slot.key)) slot.readings.add('mixed');
  }
  // Code-point order of key, then part: the same model for the same schemas, whatever
  // order the cycles came in.
  return [...slots.values()].sort((a, b) =>
    a.key === b.key ? byCodePoint(a.part ?? '', b.part ?? '') : byCodePoint(a.key, b.key),
  );
}

/** The model for a key that may read these cycles' columns. */
export function buildModel(cycles: readonly CycleColumns[]): FeedModel {
  const taken = new Set(EMPLOYEE_PROPERTIES.map((p) => p.name));
  const columns: ColumnProperty[] = [];
  for (const slot of columnSlots(cycles)) {
    const reading: Reading =
      slot.readings.size === 1 ? ([...slot.readings][0] as Reading) : 'mixed';
    columns.push({
      kind: 'column',
      name: uniqueName(
        identifierOf(slot.part === null ? slot.key : `${slot.key}_${slot.part}`),
        taken,
      ),
      type: EDM_OF_READING[reading],
      nullable: true,
      key: slot.key,
      part: slot.part,
      reading,
      description: slot.description,
    });
  }
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

/** `name`, or `name_2`, `name_3`, … when a property has it already (cut to fit 128). */
function uniqueName(name: string, taken: Set<string>): string {
  let candidate = name;
  for (let n = 2; taken.has(candidate); n++) {
    const suffix = `_${n}`;
    candidate = name.slice(0, MAX_IDENTIFIER - suffix.length) + suffix;
  }
  taken.add(candidate);
  return candidate;
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
