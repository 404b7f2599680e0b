// What the feed serves, in one table (docs/odata.md, "Capabilities"): the query options,
// the resources it refuses, and the filter functions with their signatures. The query
// options' reader (query-options.ts), the path reader (resource.ts) and the $filter
// translator (filter.ts) refuse what the table does not serve, and $metadata's
// Org.OData.Capabilities.V1 annotations (csdl.ts) are made from the same table, so that a
// client that reads them folds exactly what works.
import type { EdmType } from './model.js';

/**
 * The system query options of OData 4.01 (URL Conventions, section 5): true where the
 * feed serves them, false where it answers 501.
 */
export const QUERY_OPTIONS: Readonly<Record<string, boolean>> = {
  $select: true,
  $filter: true,
  $orderby: true,
  $top: true,
  $skip: true,
  $count: true,
  $skiptoken: true,
  $format: true,
  $expand: false,
  $search: false,
  $apply: false,
  $compute: false,
  $levels: false,
  $index: false,
  $schemaversion: false,
  $deltatoken: false,
  $id: false,
};

/** Resources of OData the feed does not serve (501): batch requests, cross joins, $all. */
export const RESOURCES_NOT_SERVED = ['$batch', '$crossjoin', '$all'] as const;

/** The type of a function's argument or result: a property type, or Edm.Int32 (length, year). */
export type ValueType = EdmType | 'Edm.Int32';

export interface FilterFunction {
  /** The types each argument may have, in order; the last of a boolean function is a literal. */
  parameters: readonly (readonly ValueType[])[];
  returns: ValueType | 'Edm.Boolean';
}

const STRING: readonly ValueType[] = ['Edm.String'];
const DATE: readonly ValueType[] = ['Edm.Date', 'Edm.DateTimeOffset'];

/**
 * The canonical functions of OData 4.01 (URL Conventions, 5.1.1.5–5.1.1.13, and cast,
 * isof): a signature where the feed serves the function, null where it answers 501.
 */
export const FILTER_FUNCTIONS: Readonly<Record<string, FilterFunction | null>> = {
  contains: { parameters: [STRING, STRING], returns: 'Edm.Boolean' },
  startswith: { parameters: [STRING, STRING], returns: 'Edm.Boolean' },
  endswith: { parameters: [STRING, STRING], returns: 'Edm.Boolean' },
  tolower: { parameters: [STRING], returns: 'Edm.String' },
  toupper: { parameters: [STRING], returns: 'Edm.String' },
  trim: { parameters: [STRING], returns: 'Edm.String' },
  length: { parameters: [STRING], returns: 'Edm.Int32' },
  year: { parameters: [DATE], returns: 'Edm.Int32' },
  month: { parameters: [DATE], returns: 'Edm.Int32' },
  day: { parameters: [DATE], returns: 'Edm.Int32' },
  indexof: null,
  substring: null,
  concat: null,
  matchesPattern: null,
  hour: null,
  minute: null,
  second: null,
  fractionalseconds: null,
  totalseconds: null,
  date: null,
  time: null,
  totaloffsetminutes: null,
  mindatetime: null,
  maxdatetime: null,
  now: null,
  round: null,
  floor: null,
  ceiling: null,
  'geo.distance': null,
  'geo.length': null,
  'geo.intersects': null,
  hassubset: null,
  hassubsequence: null,
  case: null,
  cast: null,
  isof: null,
};

/** The served filter functions, in the table's order. */
export const SERVED_FUNCTIONS = Object.entries(FILTER_FUNCTIONS)
  .filter(([, signature]) => signature !== null)
  .map(([name]) => name);

/** The function a name in $filter calls (names are case-insensitive, as in the ABNF). */
export function filterFunction(
  name: string,
): { name: string; signature: FilterFunction | null } | undefined {
  const lower = name.toLowerCase();
  const known = Object.keys(FILTER_FUNCTIONS).find((key) => key.toLowerCase() === lower);
  return known === undefined
    ? undefined
    : { name: known, signature: FILTER_FUNCTIONS[known] ?? null };
}

/** The most literals an `in` list may have (docs/odata.md, "Limits"); more is a 400. */
export const MAX_IN_ITEMS = 1_000;

/**
 * An annotation value: a Boolean, a collection of strings, or a record of Booleans (and
 * collections of property paths) — all the Capabilities terms the feed uses need.
 */
export type AnnotationValue = boolean | readonly string[] | Readonly<Record<string, boolean>>;

export interface CapabilityAnnotation {
  term: string;
  value: AnnotationValue;
}

export const CAPABILITIES_NAMESPACE = 'Org.OData.Capabilities.V1';
export const CAPABILITIES_ALIAS = 'Capabilities';

/** The annotations of the entity container: what the whole service does. */
export function containerCapabilities(): CapabilityAnnotation[] {
  return [
    { term: 'FilterFunctions', value: SERVED_FUNCTIONS },
    { term: 'BatchSupported', value: !RESOURCES_NOT_SERVED.includes('$batch') },
    { term: 'CrossJoinSupported', value: !RESOURCES_NOT_SERVED.includes('$crossjoin') },
  ];
}

/**
 * The annotations of each entity set, from QUERY_OPTIONS; the feed is read-only, so
 * nothing is insertable, updatable or deletable. `byKey`: whether the set is indexable by
 * key (ExchangeRates is not).
 */
export function entitySetCapabilities(byKey: boolean): CapabilityAnnotation[] {
  const served = (option: string) => QUERY_OPTIONS[option] === true;
  return [
    { term: 'FilterFunctions', value: SERVED_FUNCTIONS },
    { term: 'FilterRestrictions', value: { Filterable: served('$filter') } },
    { term: 'SortRestrictions', value: { Sortable: served('$orderby') } },
    { term: 'TopSupported', value: served('$top') },
    { term: 'SkipSupported', value: served('$skip') },
    { term: 'CountRestrictions', value: { Countable: served('$count') } },
    { term: 'SelectSupport', value: { Supported: served('$select') } },
    { term: 'ExpandRestrictions', value: { Expandable: served('$expand') } },
    { term: 'SearchRestrictions', value: { Searchable: served('$search') } },
    { term: 'IndexableByKey', value: byKey },
    { term: 'InsertRestrictions', value: { Insertable: false } },
    { term: 'UpdateRestrictions', value: { Updatable: false } },
    { term: 'DeleteRestrictions', value: { Deletable: false } },
  ];
}
