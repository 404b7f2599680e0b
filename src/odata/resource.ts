// What a feed URL's path names (OData URL Conventions 4.01, section 4): the service
// document, $metadata, an entity set, one entity by key, a cycle's employees or exchange
// rates, or the count of a collection. Key predicates are read by @odata/parser.
import { defaultParser } from '@odata/parser';
import { ApiError } from '../errors.js';
import { RESOURCES_NOT_SERVED } from './capabilities.js';
import { ENTITY_SETS, type EntitySetName } from './model.js';
import type { Token } from './tokens.js';

export type Resource =
  | { kind: 'service' }
  | { kind: 'metadata' }
  | {
      kind: 'collection';
      set: EntitySetName;
      /** A navigation from this merit cycle (MeritCycles('…')/Employees). */
      meritCycleId?: string;
      count: boolean;
    }
  | { kind: 'entity'; set: EntitySetName; id: string };

const notFound = (path: string) =>
  new ApiError(404, `The feed has no resource ${path} (docs/odata.md, "Resources")`);

/** The single string key of `(…)`: `('mc_…')` or `(id='mc_…')`. */
function keyOf(predicate: string, set: EntitySetName): string {
  let token: Token;
  try {
    token = defaultParser.keys(predicate) as Token;
  } catch {
    throw new ApiError(400, `${set}${predicate}: the key is not valid OData syntax`);
  }
  if (token.raw !== predicate) {
    throw new ApiError(400, `${set}${predicate}: the key is not valid OData syntax`);
  }
  let value: Token | undefined;
  if (token.type === 'SimpleKey') value = token.value?.value;
  else if (token.type === 'CompoundKey' && token.value?.length === 1) {
    const pair = token.value[0] as Token;
    if (pair.value?.key?.value?.name === 'id') value = pair.value?.value;
  }
  if (value?.value !== 'Edm.String') {
    throw new ApiError(
      400,
      `${set}${predicate}: the key is an id, a string in quotes: ${set}('…')`,
    );
  }
  return value.raw.slice(1, -1).replaceAll("''", "'");
}

/** The resource of the path below the service root (`MeritCycles('mc_…')/Employees`). */
export function resourceOf(path: string): Resource {
  let segments: string[];
  try {
    segments = path.split('/').map((segment) => decodeURIComponent(segment));
  } catch {
    throw new ApiError(400, 'The path has a malformed percent-encoding');
  }
  if (segments.at(-1) === '' && segments.length > 1) segments.pop();
  const [first = '', second, third, ...rest] = segments;
  if (first === '' && segments.length === 1) return { kind: 'service' };
  if (first === '$metadata' && segments.length === 1) return { kind: 'metadata' };
  const open = first.indexOf('(');
  const name = open === -1 ? first : first.slice(0, open);
  // `$crossjoin(Employees,MeritCycles)` names $crossjoin as well as `$crossjoin` does.
  if ((RESOURCES_NOT_SERVED as readonly string[]).includes(name)) {
    throw new ApiError(501, `${name} is not supported by this feed`);
  }
  if (!(ENTITY_SETS as readonly string[]).includes(name)) throw notFound(path);
  const set = name as EntitySetName;
  if (open === -1) {
    if (second === undefined) return { kind: 'collection', set, count: false };
    if (second === '$count' && third === undefined) return { kind: 'collection', set, count: true };
    throw notFound(path);
  }
  if (!first.endsWith(')')) throw new ApiError(400, `${first}: the key is not valid OData syntax`);
  if (set === 'ExchangeRates') {
    throw new ApiError(
      501,
      'An exchange rate by key is not supported: filter ExchangeRates instead',
    );
  }
  const id = keyOf(first.slice(open), set);
  if (second === undefined) return { kind: 'entity', set, id };
  if (set === 'MeritCycles' && (second === 'Employees' || second === 'ExchangeRates')) {
    if (third === undefined)
      return { kind: 'collection', set: second, meritCycleId: id, count: false };
    if (third === '$count' && rest.length === 0) {
      return { kind: 'collection', set: second, meritCycleId: id, count: true };
    }
  }
  // A property of an entity (`…/email`, `…/email/$value`), $ref and the like: OData has
  // them, the feed serves whole entities (with $select) only.
  throw new ApiError(
    501,
    `${path}: addressing ${second} of an entity is not supported by this feed: use $select`,
  );
}
