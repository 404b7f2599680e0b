// The syntax tree of $filter and $orderby, as the feed's grammar (grammar/query.peggy, after
// the OASIS OData ABNF) reads them, and the two entry points. A value that is not OData is
// a 400 naming the option and where the grammar stopped; what OData has and the feed does
// not serve is read into the tree (`unsupported`, a `call` of a method the feed lacks) so
// that the translator answers 501 for it (filter.ts, capabilities.ts).
import { ApiError } from '../errors.js';
import { parse } from './grammar/query-parser.js';

export type LiteralType =
  | 'null'
  | 'boolean'
  | 'string'
  | 'number'
  | 'date'
  | 'dateTimeOffset'
  | 'guid'
  | 'timeOfDay'
  | 'duration'
  | 'binary'
  | 'enum';

export interface Literal {
  kind: 'literal';
  type: LiteralType;
  /** string: the text (quotes undone); boolean: the value; number and others: the text. */
  value: string | boolean | null;
  /** The literal as written. */
  text: string;
}

export type Expression =
  | Literal
  | { kind: 'property'; name: string }
  | { kind: 'call'; name: string; args: Expression[]; text: string }
  | {
      kind: 'compare';
      operator: 'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge';
      left: Expression;
      right: Expression;
    }
  | { kind: 'in'; left: Expression; list: Literal[] }
  | { kind: 'and' | 'or'; left: Expression; right: Expression }
  | { kind: 'not'; operand: Expression }
  | { kind: 'unsupported'; what: string; text: string };

export interface OrderbyItem {
  expression: Expression;
  descending: boolean;
  text: string;
}

interface GrammarError {
  location?: { start: { offset: number } };
}

function parseWith<T>(option: string, value: string, startRule: 'filter' | 'orderby'): T {
  try {
    return parse(value, { startRule }) as T;
  } catch (error) {
    const offset = (error as GrammarError).location?.start.offset;
    // A tree deeper than the stack allows is as unreadable as a malformed one.
    const where =
      offset === undefined
        ? ''
        : offset >= value.length
          ? ' (it ends too early)'
          : ` (at character ${offset + 1}: ${JSON.stringify(value.slice(offset, offset + 20))})`;
    throw new ApiError(400, `${option} is not valid OData syntax: ${value}${where}`);
  }
}

/** `$filter`'s value as a syntax tree; 400 when it is not OData. */
export function parseFilter(value: string): Expression {
  return parseWith<Expression>('$filter', value, 'filter');
}

/** `$orderby`'s value as its items; 400 when it is not OData. */
export function parseOrderby(value: string): OrderbyItem[] {
  return parseWith<OrderbyItem[]>('$orderby', value, 'orderby');
}
