// A strict RFC 4180 reader for the tests (csv-parse): what a spreadsheet would make of the
// export. Strict where the export promises to be: every record ends with CRLF (the last
// one too), a quote or a line break appears only inside a quoted field, and every row has
// as many fields as the first.
import { parse } from 'csv-parse/sync';

export function parseCsv(text: string): string[][] {
  if (text !== '' && !text.endsWith('\r\n')) {
    throw new Error('the last record does not end with CRLF');
  }
  return parse(text, {
    record_delimiter: '\r\n',
    // csv-parse keeps a CR or LF of an unquoted field as text; the export never writes one.
    cast: (value, { quoting, lines }) => {
      if (!quoting && /[\r\n]/.test(value)) {
        throw new Error(`a bare CR or LF outside quotes on line ${lines}`);
      }
      return value;
    },
  });
}

/** Rows as objects keyed by the header. */
export function csvRecords(text: string): Record<string, string>[] {
  const [header, ...rows] = parseCsv(text);
  if (!header) return [];
  return rows.map((row) =>
    Object.fromEntries(header.map((name, index) => [name, row[index] ?? ''])),
  );
}
