// From the text of an import file to a validated DataSet, or an ImportError that says
// where the text or the data is wrong.

import { DataSetSyntaxError, importErrorFromZod } from './errors.js';
import { DataSet } from './schema.js';

function lineAndColumn(text: string, position: number): string {
  const before = text.slice(0, position);
  const line = before.split('\n').length;
  const column = position - before.lastIndexOf('\n');
  return `line ${line}, column ${column}`;
}

export function parseDataSetText(text: string): DataSet {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // V8 names the position of a bad character, but not of a file that ends too soon.
    const position =
      /position (\d+)/.exec(message)?.[1] ??
      (message.includes('Unexpected end of JSON input') ? String(text.length) : undefined);
    const where = position === undefined ? '' : ` (${lineAndColumn(text, Number(position))})`;
    throw new DataSetSyntaxError(`not valid JSON${where}: ${message}`);
  }
  return parseDataSet(json);
}

export function parseDataSet(json: unknown): DataSet {
  const result = DataSet.safeParse(json);
  if (!result.success) throw importErrorFromZod(result.error);
  return result.data;
}
