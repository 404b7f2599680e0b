// Import problems as data: each names the JSON path of the field at fault in the data set
// (and the NDJSON line it came from), and is put into words in one place, `render`:
// `line 7: meritCycles[0].employees[3].email: must be an email address`. The CSV import
// names rows and columns from the same objects (csv.ts).
import type { z } from 'zod';

/** Where in a data set: `['meritCycles', 0, 'employees', 3, 'email']`. */
export type Path = readonly (string | number)[];

export interface Problem {
  /** Empty for a problem of the file itself (its text, its shape). */
  path: Path;
  /** The NDJSON line of the record at fault. */
  line?: number;
  /** What is wrong; `{other}` stands for the record named by `other` (one it repeats). */
  message: string;
  other?: Path;
}

// How many problems one run reports: enough to fix a file in a few rounds, few enough
// that a file with an error in every row does not print a million lines.
export const MAX_PROBLEMS = 50;

// How many problems a check of the web application keeps for its whole list, the
// problems.csv a person downloads (LoadOptions.keepProblems): every one of 50,000 rows
// with a few wrong cells, and a bound on what a file with a problem on every line holds.
export const MAX_LISTED_PROBLEMS = 200_000;

/** The import was refused: its problems, at most MAX_PROBLEMS, then how many more. */
export class ImportError extends Error {
  override name = 'ImportError';
  /** The problems shown: at most `shownAtMost`, in report order. */
  readonly problems: readonly Problem[];
  /** Every problem kept, in report order (more than shown when the import kept more). */
  readonly kept: readonly Problem[];

  constructor(
    problems: readonly Problem[],
    readonly total = problems.length,
    /** How many are shown (a spreadsheet's grouped problems: all their lines). */
    shownAtMost = MAX_PROBLEMS,
  ) {
    const shown = problems.slice(0, shownAtMost);
    const lines = shown.map(render);
    if (total > shown.length) lines.push(`… and ${total - shown.length} more`);
    super(lines.length === 1 ? (lines[0] ?? '') : `${lines.length} problems:\n${lines.join('\n')}`);
    this.problems = shown;
    this.kept = problems;
    this.lines = lines;
  }

  /** The problems in words, one a line, as the command prints them. */
  readonly lines: readonly string[];
}

/** A limit in bytes as the messages say it: `24 MiB`. */
export const inMiB = (bytes: number) => `${bytes / 2 ** 20} MiB`;

/** A problem of the file itself (its text, size or shape), said in one line. */
export const fileProblem = (message: string): ImportError =>
  new ImportError([{ path: [], message }]);

/** `line 3, column 14`: where character `index` of `text` stands (its first line `first`). */
export function whereIn(text: string, index: number, first = 1): string {
  const before = text.slice(0, index);
  return `line ${before.split('\n').length + first - 1}, column ${index - before.lastIndexOf('\n')}`;
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** `['meritCycles', 0, 'employees', 3, 'email']` → `meritCycles[0].employees[3].email`. */
function jsonPath(path: Path): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else if (IDENTIFIER.test(part)) out += out === '' ? part : `.${part}`;
    else out += `[${JSON.stringify(part)}]`;
  }
  return out;
}

/**
 * The message, with the record it names put into words by `name`: by default its path,
 * from its cycle when that is the problem's own (`employees[2]`).
 */
export function messageOf(problem: Problem, name?: (other: Path) => string): string {
  const { path, other, message } = problem;
  if (other === undefined) return message;
  const sameCycle = other.length > 2 && other[0] === path[0] && other[1] === path[1];
  return message.replace('{other}', name?.(other) ?? jsonPath(sameCycle ? other.slice(2) : other));
}

/** A problem in words, as the command prints it. */
export function render(problem: Problem): string {
  const { path, line } = problem;
  const where = path.length > 0 ? `${jsonPath(path)}: ` : '';
  return `${line === undefined ? '' : `line ${line}: `}${where}${messageOf(problem)}`;
}

/** A problem of two cycles (one repeats what the other has): listed after all others. */
const acrossCycles = ({ path, other }: Problem) => other !== undefined && other[1] !== path[1];

/**
 * Report order: by the record's place in the data set — the indexes along the path (the
 * organisation, then each cycle, then its employees) — then by line; problems across
 * cycles last. Whatever order a file gave its records in, the report reads in the order
 * of the data set.
 */
function compare(a: Problem, b: Problem): number {
  const across = Number(acrossCycles(a)) - Number(acrossCycles(b));
  if (across !== 0) return across;
  const x = a.path.filter((part) => typeof part === 'number');
  const y = b.path.filter((part) => typeof part === 'number');
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
  }
  return x.length - y.length || (a.line ?? 0) - (b.line ?? 0);
}

/**
 * The problems of one import: only the first `keepAtMost` in report order are kept
 * (MAX_PROBLEMS, what a run reports; a check's whole list, MAX_LISTED_PROBLEMS at most: a
 * file with a problem on every line must not fill memory), and how many there were.
 */
export class ProblemList {
  /** Sorted and cut back to keepAtMost when this many are kept. */
  private readonly trimAt: number;

  /**
   * `kept` and `total` of a list that crossed from a worker thread as plain data; `total`
   * also counts problems found but not kept (the checks across records cap their queries).
   */
  constructor(
    readonly kept: Problem[] = [],
    public total = 0,
    readonly keepAtMost = MAX_PROBLEMS,
  ) {
    this.trimAt = keepAtMost + Math.min(keepAtMost, 50_000);
  }

  add(problem: Problem): void {
    this.total++;
    this.kept.push(problem);
    if (this.kept.length >= this.trimAt) this.trim();
  }

  error(): ImportError {
    this.trim();
    return new ImportError(this.kept, this.total);
  }

  // A stable sort: problems of one record keep the order they were found in.
  private trim(): void {
    this.kept.sort(compare).splice(this.keepAtMost);
  }
}

/** One problem per zod issue (one per unknown key), its path under `prefix`. */
export function problemsOfIssues(
  issues: readonly z.core.$ZodIssue[],
  prefix: Path = [],
  line?: number,
): Problem[] {
  return issues.flatMap((issue) => {
    const path = [...prefix, ...(issue.path as Path)];
    return issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({
          path: [...path, key],
          line,
          message: 'is not a field of this format',
        }))
      : [{ path, line, message: issue.message }];
  });
}

// Characters a terminal would act on or hide: C0 and C1 controls, line and paragraph
// separators, bidirectional overrides, lone surrogates, U+FEFF and U+FFFD.
const UNPRINTABLE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
  /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\ufffd]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** Text of the input quoted in a message, each unprintable character escaped (`\u001B`). */
export function printable(text: string): string {
  return text.replace(
    UNPRINTABLE,
    (char) => `\\u${char.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`,
  );
}
