// How a spreadsheet's CSV file is read (docs/import-format.md, "Spreadsheets as they are").
// What a spreadsheet writes unambiguously is read as it is, and the check says so ("Read
// as: separator ';', booleans TRUE/FALSE, …"): `;` or tab as the separator, TRUE/FALSE and
// Yes/No, Eligible in any letter case, a byte order mark. What would have to be guessed is
// a choice (ReadingChoices: the web form's, `compplan import`'s flags), never inferred: how
// dates are written, how amounts are written, the encoding, and whether columns the format
// does not know are ignored.

export const DATE_WRITINGS = ['YYYY-MM-DD', 'MM/DD/YYYY', 'DD/MM/YYYY'] as const;
export const AMOUNT_WRITINGS = ['1234.56', '1,234.56', '1.234,56'] as const;
export const ENCODINGS = ['utf-8', 'windows-1252'] as const;

export type DateWriting = (typeof DATE_WRITINGS)[number];
export type AmountWriting = (typeof AMOUNT_WRITINGS)[number];
export type Encoding = (typeof ENCODINGS)[number];

export interface ReadingChoices {
  /** How the file writes dates: 2025-03-15, 03/15/2025 or 15/03/2025. */
  dates: DateWriting;
  /** How the file writes amounts and numbers: 85000.00, 85,000.00 or 85.000,00. */
  amounts: AmountWriting;
  /** The file's encoding: UTF-8, or Windows-1252 (older Excel on Windows). */
  encoding: Encoding;
  /** Columns the format does not know are left out instead of refused. */
  ignoreUnknownColumns: boolean;
  /** An Excel workbook's typed cells: no writing of dates or amounts is chosen (xlsx.ts). */
  typedCells?: boolean;
}

export const DEFAULT_CHOICES: Readonly<ReadingChoices> = Object.freeze({
  dates: 'YYYY-MM-DD',
  amounts: '1234.56',
  encoding: 'utf-8',
  ignoreUnknownColumns: false,
});

/** Choices given in part (a form, flags), the rest the defaults. */
export function readingChoices(given: Partial<ReadingChoices> = {}): ReadingChoices {
  return { ...DEFAULT_CHOICES, ...given };
}

export type Separator = ',' | ';' | '\t';
const SEPARATORS: readonly Separator[] = [',', ';', '\t'];

/** What the reading of one file saw, for the check's "Read as". */
export class ReadAs {
  separator: Separator = ',';
  bom = false;
  /** The spellings of true and false met (`TRUE/FALSE`, `Yes/No`). */
  readonly booleans = new Set<string>();
  /** Enumerations met in another letter case (`Eligible`). */
  readonly enumerations = new Set<string>();
  readonly ignored: string[] = [];
  /** An Excel workbook's sheet, read with its typed cells (xlsx.ts): its name. */
  workbook: string | undefined;

  constructor(readonly choices: ReadingChoices) {}

  words(): string[] {
    const separator = { ',': "','", ';': "';'", '\t': 'tab' }[this.separator];
    // A workbook's cells are read as typed: no separator, encoding or writing applies.
    const how =
      this.workbook !== undefined
        ? [
            `Excel workbook, sheet ${JSON.stringify(this.workbook)}`,
            'cells as typed (date cells as dates, number cells as numbers)',
          ]
        : [
            `separator ${separator}`,
            `encoding ${this.choices.encoding === 'utf-8' ? 'UTF-8' : 'Windows-1252'}${this.bom ? ' (with a byte order mark)' : ''}`,
            `dates ${this.choices.dates}`,
            `amounts ${this.choices.amounts}`,
          ];
    return [
      ...how,
      ...(this.booleans.size > 0 ? [`booleans ${[...this.booleans].join(', ')}`] : []),
      ...(this.enumerations.size > 0
        ? [`${[...this.enumerations].join(', ')} in any letter case`]
        : []),
      ...(this.ignored.length > 0
        ? [`columns ignored: ${this.ignored.map((name) => JSON.stringify(name)).join(', ')}`]
        : []),
    ];
  }
}

export const readingWords = (readAs: ReadAs) => readAs.words();

/**
 * The separator of the header line (its first line, outside quotes): the one of `,` `;`
 * and tab it uses; more than one: undefined (mixed); none (one column): `,`.
 */
export function separatorOf(text: string): Separator | undefined {
  const seen = new Set<Separator>();
  let quoted = false;
  for (const char of text) {
    if (char === '"') quoted = !quoted;
    else if (!quoted && (char === '\n' || char === '\r')) break;
    else if (!quoted && SEPARATORS.includes(char as Separator)) seen.add(char as Separator);
  }
  if (seen.size > 1) return undefined;
  return [...seen][0] ?? ',';
}

/** Another separator than `separator` outside quotes in a line of the file. */
export function otherSeparatorIn(fields: readonly (string | null)[], separator: Separator) {
  return fields.some((field) =>
    SEPARATORS.some((other) => other !== separator && (field ?? '').includes(other)),
  );
}

const BOOLEANS: Record<string, { value: boolean; spelling: string }> = {
  true: { value: true, spelling: 'true/false' },
  false: { value: false, spelling: 'true/false' },
  yes: { value: true, spelling: 'Yes/No' },
  no: { value: false, spelling: 'Yes/No' },
};

/** A boolean cell: true/false, TRUE/FALSE, Yes/No in any case; undefined for other text. */
export function booleanOfCell(cell: string, readAs: ReadAs): boolean | undefined {
  const known = BOOLEANS[cell.trim().toLowerCase()];
  if (!known) return undefined;
  if (cell !== 'true' && cell !== 'false') {
    readAs.booleans.add(
      known.spelling === 'Yes/No'
        ? 'Yes/No'
        : cell.trim().toUpperCase() === cell.trim()
          ? 'TRUE/FALSE'
          : 'True/False',
    );
  }
  return known.value;
}

/** A value of an enumeration in any letter case, as the enumeration writes it. */
export function enumerationOf<T extends string>(
  cell: string,
  values: readonly T[],
  name: string,
  readAs: ReadAs,
): T | undefined {
  if ((values as readonly string[]).includes(cell)) return cell as T;
  const found = values.find((value) => value.toLowerCase() === cell.trim().toLowerCase());
  if (found !== undefined) readAs.enumerations.add(name);
  return found;
}

const DATE_SHAPES: Record<DateWriting, RegExp> = {
  'YYYY-MM-DD': /^(?<y>\d{4})-(?<m>\d{2})-(?<d>\d{2})$/,
  'MM/DD/YYYY': /^(?<m>\d{1,2})\/(?<d>\d{1,2})\/(?<y>\d{4})$/,
  'DD/MM/YYYY': /^(?<d>\d{1,2})\/(?<m>\d{1,2})\/(?<y>\d{4})$/,
};

/** A date cell written as `writing`, as YYYY-MM-DD; undefined if it is not one that exists. */
export function dateOfCell(cell: string, writing: DateWriting): string | undefined {
  const match = DATE_SHAPES[writing].exec(cell.trim());
  if (!match?.groups) return undefined;
  const { y, m, d } = match.groups as { y: string; m: string; d: string };
  const iso = `${y}-${m.padStart(2, '0')}-${d.padStart(2, '0')}`;
  const date = new Date(`${iso}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === iso ? iso : undefined;
}

const AMOUNT_SHAPES: Record<AmountWriting, { shape: RegExp; group: string; decimal: string }> = {
  '1234.56': { shape: /^-?\d+(\.\d+)?$/, group: '', decimal: '.' },
  '1,234.56': { shape: /^-?(\d{1,3}(,\d{3})*|\d+)(\.\d+)?$/, group: ',', decimal: '.' },
  '1.234,56': { shape: /^-?(\d{1,3}(\.\d{3})*|\d+)(,\d+)?$/, group: '.', decimal: ',' },
};

/** An amount or number cell written as `writing`, as a decimal string (`85000.00`). */
export function decimalOfCell(cell: string, writing: AmountWriting): string | undefined {
  const text = cell.trim();
  const { shape, group, decimal } = AMOUNT_SHAPES[writing];
  if (!shape.test(text)) return undefined;
  const plain = group === '' ? text : text.split(group).join('');
  return decimal === '.' ? plain : plain.replace(decimal, '.');
}

/** The file's bytes as text in the chosen encoding; a byte order mark noted and dropped. */
export function decodeSheet(
  bytes: Uint8Array,
  encoding: Encoding,
  readAs: ReadAs,
  strictUtf8: (bytes: Uint8Array) => string,
): string {
  const text =
    encoding === 'utf-8' ? strictUtf8(bytes) : new TextDecoder('windows-1252').decode(bytes);
  if (text.startsWith('\uFEFF')) {
    readAs.bom = true;
    return text.slice(1);
  }
  return text;
}
