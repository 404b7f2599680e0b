// A strict RFC 4180 reader for the tests: what a spreadsheet would make of the export.
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let i = 0;
  let quoted = false;
  while (i < text.length) {
    const char = text[i];
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
      } else if (char === '"') {
        quoted = false;
        i++;
      } else {
        field += char;
        i++;
      }
    } else if (char === '"' && field === '') {
      quoted = true;
      i++;
    } else if (char === ',') {
      row.push(field);
      field = '';
      i++;
    } else if (char === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i += 2;
    } else if (char === '\n' || char === '\r' || char === '"') {
      throw new Error(`bare ${JSON.stringify(char)} outside quotes at character ${i}`);
    } else {
      field += char;
      i++;
    }
  }
  if (quoted) throw new Error('unterminated quoted field');
  if (field !== '' || row.length > 0) throw new Error('the last record does not end with CRLF');
  return rows;
}

/** Rows as objects keyed by the header. */
export function csvRecords(text: string): Record<string, string>[] {
  const [header, ...rows] = parseCsv(text);
  if (!header) return [];
  return rows.map((row) => {
    if (row.length !== header.length)
      throw new Error(`a row of ${row.length} fields under a header of ${header.length}`);
    return Object.fromEntries(header.map((name, index) => [name, row[index] ?? '']));
  });
}
