// An import's problems in words for people who do not read JSON paths (the web
// application, docs/web-app.md): `Employee 4 (ada@acme.example) of merit cycle 1
// ("2026 Annual"), field "lastName": …` instead of `meritCycles[0].employees[3].lastName: …`.
// The emails and cycle names come from the file, read once more; only for a file that
// failed. A CSV import's problems already name the row and the column (csv.ts). Besides
// the first problems, for the page, the whole list the check kept (ImportError.kept) as
// CSV — line, record, field, problem — to download and work through in a spreadsheet.
import { createReadStream } from 'node:fs';
import { spreadsheetSafe } from '../audit/csv.js';
import { csvRow } from '../export/csv.js';
import { type ImportError, MAX_PROBLEMS, messageOf, type Path, type Problem } from './errors.js';
import { isObject } from './records.js';
import { recordsOfStream } from './source.js';
import type { StagedFile } from './staged-file.js';

/** A refused file's problems for people: the first in words, and every one kept as CSV. */
export interface ProblemsForPeople {
  /** The first MAX_PROBLEMS, each in words. */
  shown: string[];
  /** How many there are, and how many of them the CSV lists (it may list fewer). */
  total: number;
  listed: number;
  /** line, record, field, problem: one row a problem kept, in report order. */
  csv: string;
}

export async function problemsForPeople(
  error: ImportError,
  file: StagedFile,
): Promise<ProblemsForPeople> {
  const { kept, total } = error;
  const shownProblems = kept.slice(0, MAX_PROBLEMS);
  const names: Names =
    file.format === 'csv' ? { cycles: new Map(), employees: new Map() } : await namesIn(file, kept);
  const words = (problem: Problem) =>
    file.format === 'csv' ? messageOf(problem) : inWords(problem, names);
  const csv = [csvRow(['line', 'record', 'field', 'problem'])];
  for (const problem of kept) {
    const { record: where, field: what } = placeOf(problem, names);
    csv.push(
      csvRow(
        [
          problem.line ?? null,
          where,
          what,
          messageOf(problem, (other) => record(other, names).words),
        ].map(spreadsheetSafe),
      ),
    );
  }
  return {
    shown: shownProblems.map(words),
    total,
    listed: kept.length,
    csv: csv.join(''),
  };
}

interface Names {
  cycles: Map<number, string>;
  /** `cycle/index` → email. */
  employees: Map<string, string>;
}

const cycleOf = (path: Path) =>
  path[0] === 'meritCycles' && typeof path[1] === 'number' ? path[1] : undefined;
const employeeOf = (path: Path) =>
  cycleOf(path) !== undefined && path[2] === 'employees' && typeof path[3] === 'number'
    ? `${path[1]}/${path[3]}`
    : undefined;

/** The names of the cycles and the emails of the employees the problems speak of. */
async function namesIn(file: StagedFile, problems: readonly Problem[]): Promise<Names> {
  const names: Names = { cycles: new Map(), employees: new Map() };
  const paths = problems.flatMap((problem) =>
    problem.other ? [problem.path, problem.other] : [problem.path],
  );
  const cycles = new Set(paths.map(cycleOf).filter((cycle) => cycle !== undefined));
  const employees = new Set(paths.map(employeeOf).filter((key) => key !== undefined));
  if (cycles.size === 0) return names;
  try {
    const records = await recordsOfStream(file.name, createReadStream(file.path));
    for await (const record of records) {
      if (record.kind === 'meritCycle' && cycles.has(record.index) && isObject(record.value)) {
        const { name } = record.value;
        if (typeof name === 'string') names.cycles.set(record.index, name);
      } else if (record.kind === 'employee' && isObject(record.value)) {
        const key = `${record.cycle}/${record.index}`;
        const { email } = record.value;
        if (employees.has(key) && typeof email === 'string') names.employees.set(key, email);
      }
    }
  } catch {
    // A file that cannot be read through (its own problem is reported): fewer names.
  }
  return names;
}

const quoted = (text: string) => JSON.stringify(text.length > 80 ? `${text.slice(0, 77)}…` : text);

/** What a field is called: `column "basePay" (USD)`, `field "email"`; '' for none. */
function fieldWords(parts: Path): string {
  if (parts.length === 0) return '';
  if (parts[0] === 'columns' && parts.length > 1) {
    const rest = parts.slice(2).join('.');
    return `column ${quoted(String(parts[1]))}${rest ? ` (${rest})` : ''}`;
  }
  return `field ${quoted(parts.join('.'))}`;
}

/** The record and field of a problem, in words (the whole file: "the file"). */
function placeOf(problem: Problem, names: Names): { record: string; field: string } {
  if (problem.path.length === 0) return { record: 'the file', field: '' };
  const { words, rest } = record(problem.path, names);
  return { record: words, field: fieldWords(rest) };
}

/** The record a path is in, in words: `employee 4 (ada@…) of merit cycle 1 ("…")`. */
function record(path: Path, names: Names): { words: string; rest: Path } {
  const cycle = cycleOf(path);
  if (cycle === undefined) {
    if (path[0] === 'organization') return { words: 'the organisation', rest: path.slice(1) };
    return { words: 'the data set', rest: path };
  }
  const name = names.cycles.get(cycle);
  const cycleWords = `merit cycle ${cycle + 1}${name === undefined ? '' : ` (${quoted(name)})`}`;
  const key = employeeOf(path);
  if (key === undefined) return { words: cycleWords, rest: path.slice(2) };
  const email = names.employees.get(key);
  const employee = `employee ${Number(path[3]) + 1}${email === undefined ? '' : ` (${email})`}`;
  return { words: `${employee} of ${cycleWords}`, rest: path.slice(4) };
}

function inWords(problem: Problem, names: Names): string {
  const line = problem.line === undefined ? '' : `Line ${problem.line}: `;
  const message = messageOf(problem, (other) => record(other, names).words);
  if (problem.path.length === 0) return `${line}${message}`;
  const { words, rest } = record(problem.path, names);
  const field = fieldWords(rest);
  const where = `${words}${field ? `, ${field}` : ''}`;
  return `${line}${line ? where : where.charAt(0).toUpperCase() + where.slice(1)}: ${message}`;
}
