// The query options of a feed request (docs/odata.md, "Query options"), one option at a
// time: $filter and $orderby by the feed's grammar (syntax.ts, after the OASIS OData ABNF),
// the others by @odata/parser, a parser of the same ABNF. The options the feed serves
// (capabilities.ts, QUERY_OPTIONS) are checked here against the entity type; every other
// OData option is refused with 501, never ignored.
import { defaultParser } from '@odata/parser';
import { ApiError } from '../errors.js';
import { QUERY_OPTIONS } from './capabilities.js';
import { type EntityType, propertyNamed } from './model.js';
import { type Expression, parseFilter, parseOrderby } from './syntax.js';
import type { Token } from './tokens.js';

export interface OrderItem {
  name: string;
  descending: boolean;
}

export interface QueryOptions {
  /** Property names in the order asked; null: every property. */
  select: string[] | null;
  filter: Expression | null;
  orderby: OrderItem[] | null;
  top: number | null;
  skip: number | null;
  count: boolean;
  skiptoken: string | null;
  /** `$format`: json (the default of everything but $metadata) or xml. */
  format: 'json' | 'xml' | null;
  /** `$format`'s IEEE754Compatible parameter, when it has one. */
  ieee754Compatible: boolean | null;
  /** Each option as the request gave it (decoded), for the next page's link. */
  given: ReadonlyMap<string, string>;
}

const notImplemented = (what: string) =>
  new ApiError(501, `${what} is not supported by this feed (docs/odata.md, "Query options")`);

/** Names without `$` are system options too in OData 4.01, and names are case-insensitive. */
function systemName(name: string): string | undefined {
  const lower = name.toLowerCase();
  const dollar = lower.startsWith('$') ? lower : `$${lower}`;
  return Object.hasOwn(QUERY_OPTIONS, dollar) ? dollar : undefined;
}

/**
 * A name or value of the query string, decoded as application/x-www-form-urlencoded is
 * (WHATWG URL, "application/x-www-form-urlencoded parsing"; what HTML forms and Power
 * Query write): `+` is a space, then percent-decoding. A plus sign itself is `%2B`.
 */
function decode(text: string): string {
  try {
    return decodeURIComponent(text.replaceAll('+', ' '));
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
    if (QUERY_OPTIONS[name] !== true) throw notImplemented(`The query option ${name}`);
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

/**
 * The IEEE754Compatible parameter of a media type (`application/json;IEEE754Compatible=true`):
 * true, false, or null when it has none; 400 for any other value (OData JSON Format 4.01,
 * section 3.2). Parameter names are case-insensitive; the value may be quoted.
 */
export function ieee754CompatibleOf(mediaType: string): boolean | null {
  let found: boolean | null = null;
  for (const parameter of mediaType.split(';').slice(1)) {
    const equals = parameter.indexOf('=');
    if (equals === -1) continue;
    if (parameter.slice(0, equals).trim().toLowerCase() !== 'ieee754compatible') continue;
    let value = parameter.slice(equals + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
      value = value.slice(1, -1);
    }
    const lower = value.toLowerCase();
    if (lower !== 'true' && lower !== 'false') {
      throw new ApiError(400, `IEEE754Compatible=${value}: it is true or false`);
    }
    found = lower === 'true';
  }
  return found;
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
    ieee754Compatible: null,
    given: options,
  };
  for (const [name, value] of options) {
    if (name === '$format') {
      parsed.format = formatOf(value);
      parsed.ieee754Compatible = ieee754CompatibleOf(value);
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
        parsed.orderby = orderOf(value, type);
        break;
      case '$filter':
        parsed.filter = parseFilter(value);
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
    propertyNamed(type, name, '$select');
    if (!names.includes(name)) names.push(name);
  }
  return names;
}

/** $orderby's items: properties, each once (a second mention orders nothing more). */
function orderOf(value: string, type: EntityType): OrderItem[] {
  const items: OrderItem[] = [];
  for (const item of parseOrderby(value)) {
    const { expression } = item;
    if (expression.kind !== 'property') {
      throw notImplemented(`$orderby=${item.text} (only property names)`);
    }
    const { name } = propertyNamed(type, expression.name, '$orderby');
    if (!items.some((known) => known.name === name)) {
      items.push({ name, descending: item.descending });
    }
  }
  return items;
}
