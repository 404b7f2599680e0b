// The shape of @odata/parser's syntax tree, as far as the feed reads it: each node has a
// type (TokenType), the text it was read from (raw) and a value whose shape depends on
// the type.
export interface Token {
  type: string;
  raw: string;
  // biome-ignore lint/suspicious/noExplicitAny: the value's shape depends on the node type.
  value: any;
}

/**
 * The property a member expression names (`lastName`), or undefined for any other
 * expression (a path through a navigation, a lambda, a function).
 */
export function propertyNameOf(token: Token | undefined): string | undefined {
  let node = token;
  if (node?.type === 'CommonExpression') node = node.value;
  if (node?.type !== 'FirstMemberExpression') return undefined;
  node = node.value;
  if (node?.type !== 'MemberExpression') return undefined;
  node = node.value;
  if (node?.type !== 'PropertyPathExpression') return undefined;
  node = node.value;
  if (node?.type !== 'ODataIdentifier' || typeof node.value?.name !== 'string') return undefined;
  return node.value.name;
}
