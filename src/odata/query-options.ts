// The query options of a feed request, parsed by @odata/parser (a parser of the OASIS
// OData ABNF), one option at a time (docs/odata.md, "Query options"). The options the
// feed serves are checked here against the entity type; every other OData option is
// refused with 501, never ignored.
import { defaultParser } from '@odata/parser';
import { ApiError } from '../errors.js';
import type { EntityType } from './model.js';
import { propertyNameOf, type Token } from './tokens.js';

export interface OrderItem {
  name: string;
  descending: boolean;
}

export interface QueryOptions {
  /** Property names in the order asked; null: every property. */
  select: string[] | null;
  filter: Token | null;
  orderby: OrderItem[] | null;
  top: number | null;
  skip: number | null;
  count: boolean;
  skiptoken: string | null;
  /** `$format`: json (the default of everything but $metadata) or xml. */
  format: 'json' | 'xml' | null;
  /** Each option as the request gave it (decoded), for the next page's link. */
  given: ReadonlyMap<string, string>;
}

const SERVED = new Set([
  '$select',
  '$filter',
  '$orderby',
  '$top',
  '$skip',
  '$count',
  '$skiptoken',
  '$format',
]);

// The other system query options of OData 4.01 (URL Conventions, section 5): understood,
// not served.
const NOT_SERVED = new Set([
  '$expand',
  '$search',
  '$apply',
  '$compute',
  '$levels',
  '$index',
  '$schemaversion',
  '$deltatoken',
  '$id',
]);

const notImplemented = (what: string) =>
  new ApiError(501, `${what} is not supported by this feed (docs/odata.md, "Query options")`);

/** Names without `$` are system options too in OData 4.01, and names are case-insensitive. */
function systemName(name: string): string | undefined {
  const lower = name.toLowerCase();
  const dollar = lower.startsWith('$') ? lower : `$${lower}`;
  return SERVED.has(dollar) || NOT_SERVED.has(dollar) ? dollar : undefined;
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new ApiError(400, 'The query string has a malformed percent-encoding');
  }
}

/** The query string's options, each name once; 501 for what the feed does not serve. */
export function readOptions(queryString: string): Map<string, string> {
  const options = new Map<string, string>();
  for (const part of queryString.split('&')) {
    if (part === '') continue;
    const equals = part.indexOf('=');
    const rawName = decode(equals === -1 ? part : part.slice(0, equals));
    const value = equals === -1 ? '' : decode(part.slice(equals + 1));
    if (rawName.startsWith('@')) throw notImplemented(`The parameter alias ${rawName}`);
    const name = systemName(rawName);
    if (name === undefined) {
      if (rawName.startsWith('$')) {
        throw new ApiError(400, `${rawName} is not an OData system query option`);
      }
      throw notImplemented(`The custom query option ${rawName}`);
    }
    if (NOT_SERVED.has(name)) throw notImplemented(`The query option ${name}`);
    if (options.has(name)) throw new ApiError(400, `${name} may be given only once`);
    options.set(name, value);
  }
  return options;
}

/** One option parsed by the grammar: its token, or a 400 naming the option. */
function parseOption(name: string, value: string): Token {
  let parsed: Token | undefined;
  try {
    parsed = (defaultParser.query(`${name}=${value}`) as Token).value?.options?.[0] as
      | Token
      | undefined;
  } catch {
    parsed = undefined;
  }
  // The grammar stops at the first thing it cannot read: what it read must be the whole.
  if (!parsed || parsed.raw !== `${name}=${value}`) {
    throw new ApiError(400, `${name} is not valid OData syntax: ${value}`);
  }
  return parsed;
}

function nonNegativeInteger(name: string, value: string): number {
  const token = parseOption(name, value);
  const number = Number(token.value?.raw);
  if (!Number.isSafeInteger(number) || number < 0) {
    throw new ApiError(400, `${name} must be a non-negative integer, not ${value}`);
  }
  return number;
}

function formatOf(value: string): 'json' | 'xml' {
  // The media type forms (application/json;odata.metadata=minimal) name the same formats.
  const type = value.split(';')[0]?.trim().toLowerCase();
  if (type === 'json' || type === 'application/json') return 'json';
  if (type === 'xml' || type === 'application/xml') return 'xml';
  throw new ApiError(406, `$format=${value} is not served: json (and xml for $metadata)`);
}

function unknownProperty(type: EntityType, name: string): ApiError {
  return new ApiError(400, `${type.name} has no property ${name}`);
}

/** The options of a request on an entity set of `type`, checked against it. */
export function parseQueryOptions(
  options: ReadonlyMap<string, string>,
  type: EntityType | null,
): QueryOptions {
  const parsed: QueryOptions = {
    select: null,
    filter: null,
    orderby: null,
    top: null,
    skip: null,
    count: false,
    skiptoken: null,
    format: null,
    given: options,
  };
  for (const [name, value] of options) {
    if (name === '$format') {
      parsed.format = formatOf(value);
      continue;
    }
    // The service document and $metadata take only $format.
    if (type === null) throw notImplemented(`The query option ${name} on this resource`);
    switch (name) {
      case '$top':
        parsed.top = nonNegativeInteger(name, value);
        break;
      case '$skip':
        parsed.skip = nonNegativeInteger(name, value);
        break;
      case '$count': {
        const literal = parseOption(name, value).value?.raw;
        parsed.count = literal === 'true';
        break;
      }
      case '$skiptoken':
        parsed.skiptoken = value;
        break;
      case '$select':
        parsed.select = selectOf(parseOption(name, value), type);
        break;
      case '$orderby':
        parsed.orderby = orderOf(parseOption(name, value), type);
        break;
      case '$filter':
        parsed.filter = parseOption(name, value).value as Token;
        break;
    }
  }
  return parsed;
}

function selectOf(token: Token, type: EntityType): string[] | null {
  const names: string[] = [];
  for (const item of token.value?.items ?? []) {
    if (item.value?.value === '*') return null;
    // A property name is a SelectPath of one segment; a path (a/b) has `path` and `next`.
    const segment = (item.value as Token | undefined)?.value as Token | undefined;
    const name = segment?.value?.name;
    if (typeof name !== 'string') {
      throw notImplemented(`$select=${item.raw} (only property names)`);
    }
    if (!type.byName.has(name)) throw unknownProperty(type, name);
    if (!names.includes(name)) names.push(name);
  }
  return names;
}

function orderOf(token: Token, type: EntityType): OrderItem[] {
  return (token.value?.items ?? []).map((item: Token) => {
    const name = propertyNameOf(item.value?.expr);
    if (name === undefined) throw notImplemented(`$orderby=${item.raw} (only property names)`);
    if (!type.byName.has(name)) throw unknownProperty(type, name);
    return { name, descending: item.value?.direction === -1 };
  });
}
