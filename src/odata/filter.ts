// $filter's syntax tree (syntax.ts) as an SQL condition over an entity set's source
// (sources.ts), so that the tenant and scope conditions stay in the one query that reads
// the rows (docs/odata.md, "$filter"). Served: eq ne gt ge lt le, and or not, in,
// parentheses, the functions capabilities.ts serves (contains startswith endswith tolower
// toupper trim length year month day), a Boolean expression compared with true or false,
// a Boolean property alone; on every primitive property, against a literal of its type.
// Anything else is refused: 501 for what OData has and the feed does not serve (the same
// table $metadata's Capabilities annotations come from), 400 for what is wrong.
//
// OData compares with two values, not SQL's three: `null eq null` is true, `x ne 'a'` is
// true where x is null, and `not` of a comparison with null is true. Each comparison is
// therefore made true or false (never null) before and, or and not combine them.
//
// Both databases give the same answers: strings compare by code point (PostgreSQL: COLLATE
// "C", as the native columns are), tolower/toupper map ASCII letters only (SQLite's
// lower/upper do; PostgreSQL's are told to with translate), trim removes spaces (U+0020),
// length counts code points, and year/month/day read dates as written and instants in UTC.
import { type RawBuilder, sql } from 'kysely';
import { isCalendarDate, isDecimal } from '../columns/types.js';
import type { Dialect } from '../db/connect.js';
import { ApiError } from '../errors.js';
import { filterFunction, MAX_IN_ITEMS, SERVED_FUNCTIONS, type ValueType } from './capabilities.js';
import { type EntityType, propertyNamed } from './model.js';
import type { Source } from './sources.js';
import type { Expression, Literal } from './syntax.js';

type Sql = RawBuilder<unknown>;

interface Context {
  type: EntityType;
  source: Source;
  dialect: Dialect;
}

/** A value the condition compares: a property, or a served function of one. */
interface Operand {
  sql: Sql;
  type: ValueType;
  text: string;
  /** SQLite: a decimal property's exact text, compared by decimal_compare (sql is a double). */
  exact?: Sql;
}

type Operator = 'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge';

const SQL_OPERATORS: Record<Operator, string> = {
  eq: '=',
  ne: '<>',
  lt: '<',
  le: '<=',
  gt: '>',
  ge: '>=',
};

const MIRRORED: Record<Operator, Operator> = {
  eq: 'eq',
  ne: 'ne',
  lt: 'gt',
  le: 'ge',
  gt: 'lt',
  ge: 'le',
};

const notServed = (what: string) =>
  new ApiError(
    501,
    `$filter: ${what} is not supported by this feed: comparisons (eq ne gt ge lt le) and in of a property with literals, and, or, not, parentheses, and the functions ${SERVED_FUNCTIONS.join(' ')} (docs/odata.md, "$filter")`,
  );

const badFilter = (message: string) => new ApiError(400, `$filter: ${message}`);

/** The expression as a person would write it, for messages. */
function describe(expression: Expression): string {
  switch (expression.kind) {
    case 'literal':
    case 'call':
    case 'unsupported':
      return expression.text;
    case 'property':
      return expression.name;
    case 'compare':
      return `${describe(expression.left)} ${expression.operator} ${describe(expression.right)}`;
    case 'in':
      return `${describe(expression.left)} in (${expression.list.map((l) => l.text).join(',')})`;
    case 'and':
    case 'or':
      return `${describe(expression.left)} ${expression.kind} ${describe(expression.right)}`;
    case 'not':
      return `not ${describe(expression.operand)}`;
  }
}

/** The condition `$filter` states, true or false for every row. */
export function filterCondition(expression: Expression, context: Context): Sql {
  return condition(expression, context);
}

function condition(expression: Expression, context: Context): Sql {
  switch (expression.kind) {
    case 'and':
      return sql`(${condition(expression.left, context)} and ${condition(expression.right, context)})`;
    case 'or':
      return sql`(${condition(expression.left, context)} or ${condition(expression.right, context)})`;
    case 'not':
      return sql`(not ${condition(expression.operand, context)})`;
    case 'property': {
      // A Boolean property alone: true where it is true.
      const operand = operandOf(expression, context);
      if (operand.type !== 'Edm.Boolean') {
        throw badFilter(`${operand.text} is not a Boolean property`);
      }
      return sql`coalesce(${operand.sql} = ${booleanValue(true, context)}, false)`;
    }
    case 'call':
      return booleanCall(expression, context);
    case 'compare':
      return comparison(expression, context);
    case 'in':
      return inList(expression, context);
    case 'literal':
      if (expression.type === 'boolean') return expression.value ? sql`(1 = 1)` : sql`(1 = 0)`;
      throw badFilter(`${expression.text} is not a Boolean expression`);
    case 'unsupported':
      throw notServed(expression.what);
  }
}

/** Whether the expression is a condition (true or false), as a function or operator makes one. */
function isCondition(expression: Expression): boolean {
  switch (expression.kind) {
    case 'and':
    case 'or':
    case 'not':
    case 'compare':
    case 'in':
      return true;
    case 'call':
      return filterFunction(expression.name)?.signature?.returns === 'Edm.Boolean';
    case 'property':
    case 'literal':
    case 'unsupported':
      return false;
  }
}

function comparison(expression: Extract<Expression, { kind: 'compare' }>, context: Context): Sql {
  const { left, right, operator } = expression;
  // A condition compared with true or false (`contains(p,'x') eq true`, OData 4.01).
  const isBoolean = (e: Expression): e is Literal => e.kind === 'literal' && e.type === 'boolean';
  if (isBoolean(right) && isCondition(left)) {
    return conditionComparedWith(left, operator, right.value as boolean, context);
  }
  if (isBoolean(left) && isCondition(right)) {
    return conditionComparedWith(right, MIRRORED[operator], left.value as boolean, context);
  }
  let valueSide = left;
  let literal = right;
  let op: Operator = operator;
  if (left.kind === 'literal' && right.kind !== 'literal') {
    valueSide = right;
    literal = left;
    op = MIRRORED[operator];
  }
  if (literal.kind !== 'literal') {
    if (valueSide.kind === 'unsupported') throw notServed(valueSide.what);
    if (literal.kind === 'unsupported') throw notServed(literal.what);
    throw notServed(`comparing ${describe(valueSide)} with ${describe(literal)}`);
  }
  if (valueSide.kind === 'literal')
    throw notServed(`comparing two literals (${describe(expression)})`);
  const operand = operandOf(valueSide, context);
  if (literal.type === 'null') {
    // OData: eq null is true exactly where the value is null; any ordering with null is false.
    if (op === 'eq') return sql`(${operand.sql} is null)`;
    if (op === 'ne') return sql`(${operand.sql} is not null)`;
    return sql`(1 = 0)`;
  }
  const value = literalOf(literal, operand, context);
  const sqlOperator = sql.raw(SQL_OPERATORS[op]);
  // Where the value is null: ne is true, every other comparison false.
  const otherwise = op === 'ne' ? sql`true` : sql`false`;
  if (operand.exact) {
    const text = decimalText(literal);
    return sql`coalesce(decimal_compare(${operand.exact}, ${text}) ${sqlOperator} 0, ${otherwise})`;
  }
  return sql`coalesce(${operand.sql} ${sqlOperator} ${value}, ${otherwise})`;
}

function conditionComparedWith(
  expression: Expression,
  operator: Operator,
  value: boolean,
  context: Context,
): Sql {
  if (operator !== 'eq' && operator !== 'ne') {
    throw notServed(`ordering a condition (${describe(expression)} ${operator} ${value})`);
  }
  const inner = condition(expression, context);
  return (operator === 'eq') === value ? inner : sql`(not ${inner})`;
}

function inList(expression: Extract<Expression, { kind: 'in' }>, context: Context): Sql {
  const operand = operandOf(expression.left, context);
  const { list } = expression;
  if (list.length === 0) throw badFilter(`in () needs at least one value`);
  if (list.length > MAX_IN_ITEMS) {
    throw badFilter(`in takes at most ${MAX_IN_ITEMS} values, not ${list.length}`);
  }
  const values = list.filter((item) => item.type !== 'null');
  const withNull = values.length < list.length;
  const isNull = sql`(${operand.sql} is null)`;
  if (values.length === 0) return isNull;
  const sqlValues = values.map((item) => literalOf(item, operand, context));
  const { exact } = operand;
  // SQLite's exact decimals: the list as one JSON array (an `or` of 1,000 comparisons would
  // pass SQLite's expression depth limit).
  const member = exact
    ? sql`exists (select 1 from json_each(${JSON.stringify(values.map(decimalText))}) v
        where decimal_compare(${exact}, v.value) = 0)`
    : sql`coalesce(${operand.sql} in (${sql.join(sqlValues)}), false)`;
  return withNull ? sql`(${isNull} or ${member})` : member;
}

/** contains, startswith, endswith: a string value and a string literal. */
function booleanCall(expression: Extract<Expression, { kind: 'call' }>, context: Context): Sql {
  const known = filterFunction(expression.name);
  if (known === undefined) throw badFilter(`${expression.name} is not an OData function`);
  const { name, signature } = known;
  if (signature === null) throw notServed(`the function ${name}`);
  if (signature.returns !== 'Edm.Boolean') {
    throw badFilter(`${expression.text} is not a Boolean expression: compare it with a literal`);
  }
  const [first, second] = expression.args;
  if (expression.args.length !== 2 || !first || !second) {
    throw badFilter(`${name} takes two arguments: ${name}(property,'text')`);
  }
  const operand = operandOf(first, context);
  if (operand.type !== 'Edm.String') {
    throw badFilter(`${name} takes a string property; ${operand.text} is ${operand.type}`);
  }
  if (second.kind !== 'literal') {
    throw notServed(`${name} with a second argument other than a string literal`);
  }
  if (second.type !== 'string') {
    throw badFilter(`${name} takes a string literal, not ${second.text}`);
  }
  const text = second.value as string;
  const column = operand.sql;
  // Case-sensitive, no pattern characters: positions and lengths (in code points, on both
  // databases), not LIKE.
  if (name === 'contains') {
    const position =
      context.dialect === 'postgres'
        ? sql`strpos(${column}, ${text})`
        : sql`instr(${column}, ${text})`;
    return sql`coalesce(${position} > 0, false)`;
  }
  const length = [...text].length;
  if (name === 'startswith') {
    return sql`coalesce(substr(${column}, 1, ${length}) = ${text}, false)`;
  }
  return sql`coalesce(length(${column}) >= ${length} and substr(${column}, length(${column}) - ${length} + 1) = ${text}, false)`;
}

/** The SQL of a value: a property or a served function of one. */
function operandOf(expression: Expression, context: Context): Operand {
  switch (expression.kind) {
    case 'property': {
      const property = propertyNamed(context.type, expression.name, '$filter');
      let value = context.source.expression(property);
      // Strings compare by code point: the native columns are COLLATE "C" already.
      if (
        context.dialect === 'postgres' &&
        property.kind === 'column' &&
        property.type === 'Edm.String'
      ) {
        value = sql`(${value} collate "C")`;
      }
      const exact =
        property.type === 'Edm.Decimal' ? context.source.decimalText?.(property) : undefined;
      return { sql: value, type: property.type, text: property.name, ...(exact && { exact }) };
    }
    case 'call':
      return functionValue(expression, context);
    case 'unsupported':
      throw notServed(expression.what);
    case 'literal':
      throw notServed(`a function of a literal (${expression.text})`);
    default:
      throw badFilter(`${describe(expression)} is a condition, compared here with a value`);
  }
}

const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const DATE_GLOB = '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]';
const DATE_PATTERN = '^[0-9]{4}-[0-9]{2}-[0-9]{2}$';
const DATE_PARTS = { year: [1, 4, '%Y'], month: [6, 2, '%m'], day: [9, 2, '%d'] } as const;

function functionValue(
  expression: Extract<Expression, { kind: 'call' }>,
  context: Context,
): Operand {
  const known = filterFunction(expression.name);
  if (known === undefined) throw badFilter(`${expression.name} is not an OData function`);
  const { name, signature } = known;
  if (signature === null) throw notServed(`the function ${name}`);
  if (signature.returns === 'Edm.Boolean') {
    throw badFilter(
      `${expression.text} is a condition: compare it with true or false, or with nothing`,
    );
  }
  const [parameter] = signature.parameters;
  const [argument] = expression.args;
  if (expression.args.length !== 1 || !argument || !parameter) {
    throw badFilter(`${name} takes one argument: ${name}(property)`);
  }
  const operand = operandOf(argument, context);
  if (!parameter.includes(operand.type)) {
    throw badFilter(`${name} takes ${parameter.join(' or ')}; ${operand.text} is ${operand.type}`);
  }
  const value = operand.sql;
  const postgres = context.dialect === 'postgres';
  const result = (resultSql: Sql): Operand => ({
    sql: resultSql,
    type: signature.returns as ValueType,
    text: expression.text,
  });
  switch (name) {
    case 'tolower':
      return result(postgres ? sql`translate(${value}, ${UPPER}, ${LOWER})` : sql`lower(${value})`);
    case 'toupper':
      return result(postgres ? sql`translate(${value}, ${LOWER}, ${UPPER})` : sql`upper(${value})`);
    case 'trim':
      return result(postgres ? sql`btrim(${value}, ' ')` : sql`trim(${value}, ' ')`);
    case 'length':
      return result(sql`length(${value})`);
    default: {
      const [start, length, format] = DATE_PARTS[name as keyof typeof DATE_PARTS];
      if (operand.type === 'Edm.DateTimeOffset') {
        return result(
          postgres
            ? sql`cast(extract(${sql.raw(name)} from ${value} at time zone 'UTC') as integer)`
            : sql`cast(strftime(${format}, ${value}) as integer)`,
        );
      }
      // A date column's text, where it is one (a value loaded before types were checked
      // may not be): its digits.
      return result(
        postgres
          ? sql`(case when ${value} ~ ${DATE_PATTERN} then cast(substr(${value}, ${sql.lit(start)}, ${sql.lit(length)}) as integer) end)`
          : sql`(case when ${value} glob ${DATE_GLOB} then cast(substr(${value}, ${sql.lit(start)}, ${sql.lit(length)}) as integer) end)`,
      );
    }
  }
}

function booleanValue(value: boolean, context: Context): Sql {
  if (context.dialect === 'postgres') return value ? sql`true` : sql`false`;
  return sql.lit(value ? 1 : 0);
}

const wrongLiteral = (literal: Literal, operand: Operand) =>
  badFilter(`${literal.text} is not a valid ${operand.type} literal for ${operand.text}`);

/** A decimal literal's text without a leading plus; undefined when it is not a decimal. */
function decimalText(literal: Literal): string | undefined {
  if (literal.type !== 'number') return undefined;
  const text = literal.text.replace(/^\+/, '');
  return isDecimal(text) ? text : undefined;
}

/** A decimal as SQL: PostgreSQL's numeric (exact at any length), SQLite's number. */
function decimalValue(text: string, context: Context): Sql {
  return context.dialect === 'postgres' ? sql`cast(${text} as numeric)` : sql`${Number(text)}`;
}

/** The literal as an SQL value of the operand's type; 400 when it is not one. */
function literalOf(literal: Literal, operand: Operand, context: Context): Sql {
  switch (operand.type) {
    case 'Edm.String':
      if (literal.type !== 'string') throw wrongLiteral(literal, operand);
      return sql`${literal.value}`;
    case 'Edm.Decimal':
    case 'Edm.Int32': {
      const text = decimalText(literal);
      if (text === undefined) throw wrongLiteral(literal, operand);
      return decimalValue(text, context);
    }
    case 'Edm.Date':
      if (literal.type !== 'date' || !isCalendarDate(literal.text)) {
        throw wrongLiteral(literal, operand);
      }
      return sql`${literal.text}`;
    case 'Edm.Boolean':
      if (literal.type !== 'boolean') throw wrongLiteral(literal, operand);
      return booleanValue(literal.value as boolean, context);
    case 'Edm.DateTimeOffset': {
      const instant = Date.parse(literal.text);
      if (literal.type !== 'dateTimeOffset' || Number.isNaN(instant)) {
        throw wrongLiteral(literal, operand);
      }
      const iso = new Date(instant).toISOString();
      return context.dialect === 'postgres' ? sql`${iso}::timestamptz` : sql`${iso}`;
    }
  }
}
