// The problems of a spreadsheet (a CSV file, docs/import-format.md "CSV"), for the people
// who fix them in a spreadsheet (decisions §11, "What a person sees"): every problem of the
// file at once — header and cells — each of a kind that says, in plain words, what is wrong
// and what to do, with the row, the column and the value as written. Grouped by kind and
// column for the page and the command line (`groupProblems`), the whole list as CSV to fix
// in a spreadsheet (`problemsCsv`), and each kind explained on the help page compplan serves
// (/app/help/import, `helpPage`), at the anchor `#KIND`.
import { spreadsheetSafe } from '../audit/csv.js';
import { csvRow } from '../export/csv.js';
import { ImportError, type Problem } from './errors.js';
import { type ReadingChoices, readingWords } from './sheet-reading.js';

export type ProblemKind = keyof typeof KINDS;

/** One problem of the file: where (the spreadsheet's row, the header's column) and what. */
export interface SheetProblem {
  kind: ProblemKind;
  /** The row as the spreadsheet numbers it (the header is row 1); none: the whole file. */
  row?: number;
  /** The column as the header names it. */
  column?: string;
  /** The cell as written (null: empty). */
  value?: string | null;
  /** For kinds whose words depend on the case (`other`, `repeated-email`): the words. */
  detail?: string;
}

/** A kind of problem in one column, for the page: what, what to do, how many, the first. */
export interface ProblemGroup {
  kind: ProblemKind;
  /** The help page's anchor: `/app/help/import#KIND`. */
  help: string;
  problem: string;
  remedy: string;
  column?: string;
  count: number;
  /** The first EXAMPLES rows, in row order. */
  examples: { row?: number; value?: string | null }[];
}

type Words = (choices: ReadingChoices) => string;
const said =
  (text: string): Words =>
  () =>
    text;

/**
 * Every kind: what is wrong and what to do, in the words of someone with a spreadsheet.
 * Listed in the order the help page explains them.
 */
const KINDS = {
  'unknown-column': {
    problem: said('This column is not one the import knows.'),
    remedy: said(
      'Rename it to a column the import reads (the merit cycle’s templates have them all), delete it, or choose “ignore columns the import does not know”.',
    ),
  },
  'missing-column': {
    problem: said('A column the import needs is missing from the first row.'),
    remedy: said('Add the column, with this name in the first row, and fill it for every row.'),
  },
  'repeated-column': {
    problem: said('Two columns have the same name.'),
    remedy: said('Keep one of them: delete or rename the other.'),
  },
  'currency-twice': {
    problem: said('The currency is given twice: as “currencyCode” and as “currencyCode.code”.'),
    remedy: said('Keep one of the two columns.'),
  },
  'mixed-separators': {
    problem: said('The rows separate their values with different characters (, ; or tab).'),
    remedy: said(
      'Save the file again from your spreadsheet as one CSV file, so that every row uses the same separator.',
    ),
  },
  'field-count': {
    problem: said('This row has a different number of values than the first row has columns.'),
    remedy: said(
      'Check the row for a value with a separator (, or ;) in it that is not in quotes, or for a missing value.',
    ),
  },
  quotes: {
    problem: said('A value’s quotes are not closed, or a quote stands inside a value.'),
    remedy: said(
      'Put a value that contains quotes in quotes, and double each quote inside it ("" for ").',
    ),
  },
  encoding: {
    problem: (choices) =>
      `The file is not written in the encoding chosen (${choices.encoding === 'utf-8' ? 'UTF-8' : 'Windows-1252'}).`,
    remedy: said(
      'Save the file as “CSV UTF-8” from your spreadsheet, or choose the encoding Windows-1252 (older Excel on Windows).',
    ),
  },
  date: {
    problem: (choices) =>
      choices.typedCells
        ? 'This is neither a date cell nor a date written as YYYY-MM-DD.'
        : `This is not a date written as ${choices.dates}.`,
    remedy: (choices) =>
      choices.typedCells
        ? 'Make the cell a date (format it as a date), or write the date as YYYY-MM-DD (for example 2025-03-15).'
        : `Write the date as ${choices.dates} (for example ${dateExample(choices)}), or choose how the file writes dates.`,
  },
  amount: {
    problem: (choices) =>
      choices.typedCells
        ? 'This is neither a number cell nor an amount written as 1234.56.'
        : `This is not an amount written as ${choices.amounts}.`,
    remedy: (choices) =>
      choices.typedCells
        ? 'Make the cell a number, or write the amount as digits, as 1234.56 (no currency sign).'
        : `Write the amount as digits, as ${choices.amounts} (no currency sign), or choose how the file writes amounts.`,
  },
  number: {
    problem: (choices) =>
      choices.typedCells
        ? 'This is neither a number cell nor a number written as 1234.56.'
        : `This is not a number written as ${choices.amounts}.`,
    remedy: (choices) =>
      choices.typedCells
        ? 'Make the cell a number, or write the number as digits, as 1234.56.'
        : `Write the number as digits, as ${choices.amounts}, or choose how the file writes numbers.`,
  },
  boolean: {
    problem: said('This is not a yes or no.'),
    remedy: said('Write TRUE or FALSE (or Yes or No), or leave the cell empty.'),
  },
  eligibility: {
    problem: said('This is not an eligibility the import knows.'),
    remedy: said('Write Eligible or Ineligible.'),
  },
  'currency-code': {
    problem: said('This is not a currency code.'),
    remedy: said('Write the three-letter ISO 4217 code of the currency, such as USD, EUR or GBP.'),
  },
  'cycle-currency': {
    problem: said('An amount in another currency than the merit cycle’s.'),
    remedy: said('Give the amounts of this column in the merit cycle’s currency.'),
  },
  email: {
    problem: said('This is not an email address.'),
    remedy: said('Write the employee’s email address, such as ada@example.com.'),
  },
  'repeated-email': {
    problem: said('Two rows have the same email address (capitals do not count).'),
    remedy: said('Each employee is one row: delete the repeated row, or correct its email.'),
  },
  empty: {
    problem: said('This cell must not be empty.'),
    remedy: said('Fill it in.'),
  },
  'too-long': {
    problem: said('This value is too long.'),
    remedy: said('Shorten it.'),
  },
  'other-columns': {
    problem: said('The “columns.other” cell is not what the export writes there.'),
    remedy: said(
      'Leave the cell as the export wrote it, or empty; give a new column a column of its own (columns.KEY).',
    ),
  },
  'merged-cells': {
    problem: said('Cells of the first row are merged into one.'),
    remedy: said(
      'Unmerge the cells of the first row and give each column its own name, as the format lists them.',
    ),
  },
  formula: {
    problem: said('This cell holds a formula whose result was not saved with the workbook.'),
    remedy: said(
      'Open the workbook in Excel or LibreOffice, let it calculate, and save it again; or copy the cells and paste them as values.',
    ),
  },
  'cell-error': {
    problem: said('This cell holds an error (such as #N/A or #DIV/0!), not a value.'),
    remedy: said('Correct the formula or write the value in the cell.'),
  },
  file: {
    problem: said('The file cannot be read as a spreadsheet of employees.'),
    remedy: said('See the problem’s words; the help page explains the format.'),
  },
  other: {
    problem: said('This value is refused.'),
    remedy: said('See the problem’s words; the help page explains each column.'),
  },
} satisfies Record<string, { problem: Words; remedy: Words }>;

export const PROBLEM_KINDS = Object.keys(KINDS) as ProblemKind[];

/** Each kind's words for the help page, said for the default choices (`CHOICES` below). */
export function kindsExplained(
  choices: ReadingChoices,
): { kind: ProblemKind; problem: string; remedy: string }[] {
  return PROBLEM_KINDS.map((kind) => ({
    kind,
    problem: KINDS[kind].problem(choices),
    remedy: KINDS[kind].remedy(choices),
  }));
}

const dateExample = (choices: ReadingChoices) =>
  ({ 'YYYY-MM-DD': '2025-03-15', 'MM/DD/YYYY': '03/15/2025', 'DD/MM/YYYY': '15/03/2025' })[
    choices.dates
  ];

/** How many examples a group shows (the whole list: problemsCsv). */
export const EXAMPLES = 5;

/** What a problem says: its kind's words, or its own. */
export function problemWords(problem: SheetProblem, choices: ReadingChoices): string {
  return problem.detail ?? KINDS[problem.kind].problem(choices);
}

/** The problems grouped by kind, column and words; groups in the order first met by row. */
export function groupProblems(
  problems: readonly SheetProblem[],
  choices: ReadingChoices,
): ProblemGroup[] {
  const groups = new Map<string, ProblemGroup>();
  const ordered = [...problems].sort((a, b) => (a.row ?? 0) - (b.row ?? 0));
  for (const problem of ordered) {
    const words = problemWords(problem, choices);
    const key = JSON.stringify([problem.kind, problem.column ?? null, words]);
    let group = groups.get(key);
    if (!group) {
      group = {
        kind: problem.kind,
        help: `/app/help/import#${problem.kind}`,
        problem: words,
        remedy: KINDS[problem.kind].remedy(choices),
        ...(problem.column !== undefined && { column: problem.column }),
        count: 0,
        examples: [],
      };
      groups.set(key, group);
    }
    group.count++;
    if (group.examples.length < EXAMPLES) {
      group.examples.push({
        ...(problem.row !== undefined && { row: problem.row }),
        ...(problem.value !== undefined && { value: problem.value }),
      });
    }
  }
  return [...groups.values()];
}

/** `row 4, columns.hire_date: "03/15/2025"` */
export function whereWords(
  problem: { row?: number; value?: string | null },
  column?: string,
): string {
  const parts = [problem.row === undefined ? undefined : `row ${problem.row}`, column].filter(
    (part) => part !== undefined,
  );
  const value =
    problem.value === undefined
      ? ''
      : problem.value === null
        ? ' (empty)'
        : `: ${quote(problem.value)}`;
  return `${parts.join(', ')}${value}`;
}

const quote = (text: string) => JSON.stringify(text.length > 80 ? `${text.slice(0, 77)}…` : text);

/** The whole list as CSV: row, column, value, problem (formulas made plain text). */
export function problemsCsv(problems: readonly SheetProblem[], choices: ReadingChoices): string {
  const ordered = [...problems].sort((a, b) => (a.row ?? 0) - (b.row ?? 0));
  const lines = [csvRow(['row', 'column', 'value', 'problem'])];
  for (const problem of ordered) {
    lines.push(
      csvRow(
        [
          problem.row ?? null,
          problem.column ?? null,
          problem.value ?? null,
          `${problemWords(problem, choices)} ${KINDS[problem.kind].remedy(choices)}`,
        ].map(spreadsheetSafe),
      ),
    );
  }
  return lines.join('');
}

/** The groups as the command line prints them. */
export function groupsInWords(groups: readonly ProblemGroup[]): string[] {
  const lines: string[] = [];
  for (const group of groups) {
    const times = `${group.count.toLocaleString('en')} times`;
    const count = group.count === 1 ? '' : ` (${times})`;
    const where =
      group.column !== undefined ? `${group.column}${count}: ` : count === '' ? '' : `${times}: `;
    lines.push(`${where}${group.problem} ${group.remedy}`);
    for (const example of group.examples) {
      const where = whereWords(example);
      if (where !== '') lines.push(`  ${where}`);
    }
    if (group.count > group.examples.length) {
      lines.push(`  … and ${(group.count - group.examples.length).toLocaleString('en')} more`);
    }
  }
  return lines;
}

/**
 * A spreadsheet refused: every problem (`sheetProblems`, at most MAX_SHEET_PROBLEMS kept),
 * how it was read (`readAs`), and the choices it was read with. Its message is what the
 * command line prints: what was read, then the problems grouped.
 */
export class SheetProblemsError extends ImportError {
  override name = 'SheetProblemsError';
  readonly groups: ProblemGroup[];

  constructor(
    readonly sheetProblems: readonly SheetProblem[],
    readonly choices: ReadingChoices,
    readonly readAs: readonly string[],
    readonly sheetTotal = sheetProblems.length,
  ) {
    const groups = groupProblems(sheetProblems, choices);
    const lines = groupsInWords(groups);
    const head = [
      `${sheetTotal === 1 ? 'One problem' : `${sheetTotal.toLocaleString('en')} problems`} (each explained at /app/help/import). Read as: ${readAs.join(', ')}.`,
    ];
    const all = [...head, ...lines];
    super(
      all.map((message): Problem => ({ path: [], message })),
      all.length,
      all.length,
    );
    this.groups = groups;
  }

  /** The whole list, as CSV (row, column, value, problem). */
  csv(): string {
    return problemsCsv(this.sheetProblems, this.choices);
  }
}

/** How many problems one check keeps: every one of 50,000 rows with a few wrong cells. */
export const MAX_SHEET_PROBLEMS = 200_000;

export { readingWords };
