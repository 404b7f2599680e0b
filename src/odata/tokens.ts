// The shape of @odata/parser's syntax tree, as far as the feed reads it: each node has a
// type (TokenType), the text it was read from (raw) and a value whose shape depends on
// the type.
export interface Token {
  type: string;
  raw: string;
  // biome-ignore lint/suspicious/noExplicitAny: the value's shape depends on the node type.
  value: any;
}
