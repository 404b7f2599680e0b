// $filter's syntax tree (from @odata/parser) as an SQL condition over an entity set's
// source (sources.ts), so that the tenant and scope conditions stay in the one query that
// reads the rows (docs/odata.md, "$filter"). Served: eq ne gt ge lt le, and or not,
// parentheses, contains and startswith on strings, a boolean property alone; on every
// primitive property, against a literal of its type. Anything else is refused: 501 for
// what OData has and the feed does not serve, 400 for what is wrong.
//
// OData compares with two values, not SQL's three: `null eq null` is true, `x ne 'a'` is
// true where x is null, and `not` of a comparison with null is true. Each comparison is
// therefore made true or false (never null) before and, or and not combine them.
import { type RawBuilder, sql } from 'kysely';
import { isCalendarDate, isDecimal } from '../columns/types.js';
import type { Dialect } from '../db/connect.js';
import { ApiError } from '../errors.js';
import type { EdmType, EntityType, Property } from './model.js';
import type { Source } from './sources.js';
import { propertyNameOf, type Token } from './tokens.js';

type Sql = RawBuilder<unknown>;

interface Context {
  type: EntityType;
  source: Source;
  dialect: Dialect;
}

const COMPARISONS: Record<string, { op: string; mirrored: string }> = {
  EqualsExpression: { op: '=', mirrored: '=' },
  NotEqualsExpression: { op: '<>', mirrored: '<>' },
  LesserThanExpression: { op: '<', mirrored: '>' },
  LesserOrEqualsExpression: { op: '<=', mirrored: '>=' },
  GreaterThanExpression: { op: '>', mirrored: '<' },
  GreaterOrEqualsExpression: { op: '>=', mirrored: '<=' },
};

const notServed = (token: Token) =>
  new ApiError(
    501,
    `$filter: ${token.raw} is not supported by this feed: comparisons (eq ne gt ge lt le) of a property with a literal, and, or, not, parentheses, contains and startswith (docs/odata.md, "$filter")`,
  );

/** The condition `$filter` states, true or false for every row. */
export function filterCondition(token: Token, context: Context): Sql {
  return condition(token, context);
}

function condition(token: Token, context: Context): Sql {
  switch (token.type) {
    case 'CommonExpression':
    case 'BoolParenExpression':
    case 'ParenExpression':
      return condition(token.value, context);
    case 'AndExpression':
      return sql`(${condition(token.value.left, context)} and ${condition(token.value.right, context)})`;
    case 'OrExpression':
      return sql`(${condition(token.value.left, context)} or ${condition(token.value.right, context)})`;
    case 'NotExpression':
      return sql`(not ${condition(token.value, context)})`;
    case 'MethodCallExpression':
      return methodCall(token, context);
    case 'FirstMemberExpression': {
      // A Boolean property alone: true where it is true.
      const property = propertyOf(token, context);
      if (property.type !== 'Edm.Boolean') {
        throw new ApiError(400, `$filter: ${property.name} is not a Boolean property`);
      }
      return sql`coalesce(${context.source.expression(property)} = ${booleanValue(true, context)}, false)`;
    }
    default: {
      const comparison = COMPARISONS[token.type];
      if (comparison) return compare(token, comparison, context);
      throw notServed(token);
    }
  }
}

function propertyOf(token: Token, context: Context): Property {
  const name = propertyNameOf(token);
  if (name === undefined) throw notServed(token);
  const property = context.type.byName.get(name);
  if (!property) throw new ApiError(400, `$filter: ${context.type.name} has no property ${name}`);
  return property;
}

function compare(
  token: Token,
  comparison: { op: string; mirrored: string },
  context: Context,
): Sql {
  const { left, right } = token.value as { left: Token; right: Token };
  let propertyToken = left;
  let literalToken = right;
  let op = comparison.op;
  if (left.type === 'Literal' && right.type !== 'Literal') {
    propertyToken = right;
    literalToken = left;
    op = comparison.mirrored;
  }
  if (literalToken.type !== 'Literal' || propertyNameOf(propertyToken) === undefined) {
    throw notServed(token);
  }
  const property = propertyOf(propertyToken, context);
  const column = context.source.expression(property);
  if (literalToken.value === 'null') {
    // OData: eq null is true exactly where the value is null; any ordering with null is false.
    if (op === '=') return sql`(${column} is null)`;
    if (op === '<>') return sql`(${column} is not null)`;
    return sql`(1 = 0)`;
  }
  const value = literalOf(literalToken, property, context);
  const operator = sql.raw(op);
  // Where the value is null: ne is true, every other comparison false.
  return sql`coalesce(${column} ${operator} ${value}, ${op === '<>' ? sql`true` : sql`false`})`;
}

function methodCall(token: Token, context: Context): Sql {
  const { method, parameters } = token.value as { method: string; parameters: Token[] };
  if (method !== 'contains' && method !== 'startswith') throw notServed(token);
  const [first, second] = parameters;
  if (parameters.length !== 2 || !first || second?.type !== 'Literal') throw notServed(token);
  const property = propertyOf(first, context);
  if (property.type !== 'Edm.String') {
    throw new ApiError(
      400,
      `$filter: ${method} takes a string property; ${property.name} is ${property.type}`,
    );
  }
  if (second.value !== 'Edm.String') {
    throw new ApiError(400, `$filter: ${method} takes a string literal, not ${second.raw}`);
  }
  const column = context.source.expression(property);
  const text = stringLiteral(second.raw);
  // Case-sensitive, no pattern characters: a position, not LIKE.
  if (method === 'contains') {
    const position =
      context.dialect === 'postgres'
        ? sql`strpos(${column}, ${text})`
        : sql`instr(${column}, ${text})`;
    return sql`coalesce(${position} > 0, false)`;
  }
  return sql`coalesce(substr(${column}, 1, length(${text})) = ${text}, false)`;
}

/** `'O''Brien'` → `O'Brien`. */
function stringLiteral(raw: string): string {
  return raw.slice(1, -1).replaceAll("''", "'");
}

const NUMERIC_LITERALS = new Set([
  'Edm.Decimal',
  'Edm.Double',
  'Edm.Single',
  'Edm.Int64',
  'Edm.Int32',
  'Edm.Int16',
  'Edm.SByte',
  'Edm.Byte',
]);

function booleanValue(value: boolean, context: Context): Sql {
  if (context.dialect === 'postgres') return value ? sql`true` : sql`false`;
  return sql.lit(value ? 1 : 0);
}

const wrongLiteral = (raw: string, property: Property, expected: EdmType) =>
  new ApiError(400, `$filter: ${raw} is not a valid ${expected} literal for ${property.name}`);

/** The literal as an SQL value of the property's type; 400 when it is not one. */
function literalOf(token: Token, property: Property, context: Context): Sql {
  const { raw } = token;
  const literalType = token.value as string;
  switch (property.type) {
    case 'Edm.String':
      if (literalType !== 'Edm.String') throw wrongLiteral(raw, property, property.type);
      return sql`${stringLiteral(raw)}`;
    case 'Edm.Decimal':
      if (!NUMERIC_LITERALS.has(literalType) || !isDecimal(raw.replace(/^\+/, ''))) {
        throw wrongLiteral(raw, property, property.type);
      }
      return context.dialect === 'postgres'
        ? sql`${raw.replace(/^\+/, '')}::numeric`
        : sql`${Number(raw)}`;
    case 'Edm.Date':
      if (literalType !== 'Edm.Date' || !isCalendarDate(raw)) {
        throw wrongLiteral(raw, property, property.type);
      }
      return sql`${raw}`;
    case 'Edm.Boolean':
      if (literalType !== 'Edm.Boolean') throw wrongLiteral(raw, property, property.type);
      return booleanValue(raw.toLowerCase() === 'true', context);
    case 'Edm.DateTimeOffset': {
      const instant = Date.parse(raw);
      if (literalType !== 'Edm.DateTimeOffset' || Number.isNaN(instant)) {
        throw wrongLiteral(raw, property, property.type);
      }
      const iso = new Date(instant).toISOString();
      return context.dialect === 'postgres' ? sql`${iso}::timestamptz` : sql`${iso}`;
    }
  }
}
