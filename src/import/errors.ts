// Import problems, each named by the JSON path of the field at fault, e.g.
// `meritCycles[0].employees[3].email: must be an email address`.
import type { z } from 'zod';

export class ImportError extends Error {
  override name = 'ImportError';

  constructor(readonly problems: readonly string[]) {
    super(
      problems.length === 1
        ? (problems[0] ?? '')
        : `${problems.length} problems:\n${problems.join('\n')}`,
    );
  }
}

/** The text of an import file is not JSON: one problem, said in one line. */
export class DataSetSyntaxError extends Error {
  override name = 'DataSetSyntaxError';
}

// The largest record a JSON or NDJSON data set may hold (docs/import-format.md, "Limits"):
// one employee, a merit cycle without its employees, the organisation with the rest of the
// top object, one NDJSON line. An employee is about half a KiB of JSON; 1 MiB leaves room
// for thousands of columns, yet keeps what one record costs to hold and parse (a few times
// its text) far below the memory an import may use.
export const MAX_RECORD_CHARS = 1024 * 1024;
export const MAX_RECORD_TEXT = '1 MiB';

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

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** `['meritCycles', 0, 'employees', 3, 'email']` → `meritCycles[0].employees[3].email`. */
export function jsonPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else if (IDENTIFIER.test(String(part))) out += out === '' ? String(part) : `.${String(part)}`;
    else out += `[${JSON.stringify(String(part))}]`;
  }
  return out === '' ? '(the file)' : out;
}

// How many problems one run reports: enough to fix a file in a few rounds, few enough
// that a file with an error in every row does not print a million lines.
export const MAX_PROBLEMS = 50;

/** One problem line per zod issue (one per unknown key), its path under `prefix`. */
export function problemsOfIssues(
  issues: readonly z.core.$ZodIssue[],
  prefix: readonly PropertyKey[] = [],
): { problem: string; unrecognized: boolean }[] {
  const problems: { problem: string; unrecognized: boolean }[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        problems.push({
          problem: `${jsonPath([...prefix, ...issue.path, key])}: is not a field of this format`,
          unrecognized: true,
        });
      }
    } else {
      problems.push({
        problem: `${jsonPath([...prefix, ...issue.path])}: ${issue.message}`,
        unrecognized: false,
      });
    }
  }
  return problems;
}

/** The problems as one error: the first MAX_PROBLEMS, then how many more there are. */
export function cappedImportError(problems: readonly string[], total = problems.length) {
  const shown = problems.slice(0, MAX_PROBLEMS);
  if (total > shown.length) shown.push(`… and ${total - shown.length} more`);
  return new ImportError(shown);
}

export function importErrorFromZod(error: z.ZodError): ImportError {
  return cappedImportError(problemsOfIssues(error.issues).map(({ problem }) => problem));
}
