// npm run bench:data -- --employees N [--deep N] [--database URL] [--only-load] [--format json]
// npm run bench:data -- --deep N --database URL --change-deep PERCENT
// npm run bench:data -- --deep 0 --database URL --open-types   (the cost of the type checks)
// npm run bench:data -- --employees 200 --deep N --slices --only-load   (the row slices' data)
//
// A realistic large data set, loaded through the real import path — the command line,
// `bin/compplan.js import FILE` executed (with the V8 flags of its first line), one process
// per file, as a user runs it:
// --employees employees (default 1,000,000) in 200 merit cycles over 20 organisations
// (bench-01 … bench-20, 10 cycles each), plus one organisation `bench-deep` with one
// cycle of --deep employees (default 500,000; 0 for none) for the deep-page benchmark.
// Deterministic: the same arguments give the same ids and values, so a rerun changes
// nothing.
//
// The data set is written as NDJSON files into a temp dir (one per organisation, or with
// --format json one JSON data set each, about 22 MB; the deep cycle in one NDJSON file,
// larger than a JSON data set may be), then each file is imported; the deep cycle is then
// imported once more (everything matched, unchanged). For each import: its time and the peak resident memory of
// the import process (VmHWM of /proc/PID/status, sampled every 100 ms).
//
// A baseline from the same run on the same machine, since speed is only quoted against
// one: the same files read and JSON.parse'd line by line (no validation, no database), and
// the same rows inserted bare (prepared statement or unnest batches, no validation, no
// staging, no matching) into a scratch database with the same schema. --only-load skips
// the JSON import and the baselines (what `npm run bench` needs). --change-deep PERCENT
// imports only the deep cycle again, with that percentage of its employees changed (a new
// preferred name for every 100/PERCENT-th): what `npm run bench` reads a delta of.
// --open-types writes every column's type as an open one (`x-currency`, …), whose values
// the import keeps unchecked: runs with and without it give the cost of the type checks.
// --slices gives the deep cycle's employees two more text columns for the row slices'
// benchmark (bench/slices.ts): `region`, 'Nordics' for every tenth employee (exactly 10 %
// of the cycle when --deep is a multiple of 10), and `managerEmail`, a reporting tree in
// which employee 1 (SLICE_MANAGER_EMAIL) has exactly 1,000 employees below, at any depth
// (when --deep is at least 1,002); and it adds an organisation `bench-tenth` with one
// cycle (TENTH_CYCLE) of --deep / 10 employees of the same shape, made from the slice's
// own indices (0, 10, 20, …), so that an unsliced download of the slice's size reads the
// same rows. Without --slices the data is as before (the other benchmarks' figures stand).
// Not part of npm test.
import { spawn } from 'node:child_process';
import {
  closeSync,
  createReadStream,
  fsyncSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import type { DataSetInput } from '../src/import/schema.js';
import { oneOfFlag, parseFlags, wholeNumberFlag } from './options.js';

export const ORGANIZATIONS = 20;
export const CYCLES_PER_ORGANIZATION = 10;
export const DEEP_ORGANIZATION = 'bench-deep';
export const DEEP_CYCLE = 'mc_d0000000-0000-4000-8000-000000000001';
export const TENTH_ORGANIZATION = 'bench-tenth';
export const TENTH_CYCLE = 'mc_d0000000-0000-4000-8000-000000000002';
/** The region of every tenth employee of the deep cycle with --slices: 10 % of it. */
export const SLICE_REGION = 'Nordics';
const REGIONS = [
  SLICE_REGION,
  'DACH',
  'Benelux',
  'Iberia',
  'Italy',
  'France',
  'UK',
  'US East',
  'US West',
  'APAC',
];
/** The employees below SLICE_MANAGER_EMAIL, at any depth, in a deep cycle of 1,002 or more. */
export const SLICE_REPORTING_LINE = 1_000;
const DEEP_CYCLE_NUMBER = 100_000;
const deepEmail = (index: number) => employee(DEEP_CYCLE_NUMBER, index, 'deep.example').email;

/**
 * The manager of deep employee `index` with --slices: employee 0 has none; employee 1 is
 * under 0, and employees 2 … 1,001 form a tree of ten reports a manager below 1 (1,000
 * employees, four levels); the rest report to 0 (up to 10,019) or to index / 10, never
 * into 1's tree.
 */
function managerIndex(index: number): number | null {
  if (index === 0) return null;
  if (index === 1) return 0;
  if (index <= SLICE_REPORTING_LINE + 1) return 1 + Math.floor((index - 2) / 10);
  return index < 10 * (SLICE_REPORTING_LINE + 2) ? 0 : Math.floor(index / 10);
}

/** Employee 1 of the deep cycle: SLICE_REPORTING_LINE employees below them with --slices. */
export const SLICE_MANAGER_EMAIL = (): string => deepEmail(1);

/** Employee `index` with the two text columns of --slices (region, managerEmail). */
function withSliceColumns(stored: EmployeeInput, index: number): EmployeeInput {
  const manager = managerIndex(index);
  return {
    ...stored,
    columns: {
      ...(stored.columns ?? {}),
      region: { name: 'Region', type: 'text', value: REGIONS[index % REGIONS.length] ?? '' },
      managerEmail: {
        name: 'Manager Email',
        type: 'text',
        value: manager === null ? null : deepEmail(manager),
      },
    },
  };
}

// Non-ASCII letters in names of every part of the sort order, and in one department of
// eight (which does not follow the sort order), so that every page carries some near its
// start: the load generator decodes each body to a string, about twice as slowly from
// the first non-ASCII character on. With non-ASCII only in last names that sort last
// (Østergaard, Ñúñez: code-point order) the deep pages were all such names, page 1 none,
// and the deep page looked slower than page 1 for that alone (docs/benchmarks.md).
const FIRST = [
  'José',
  'Zoë',
  'Björn',
  'Chloé',
  'Ada',
  'Grace',
  'Alan',
  'Edsger',
  'Barbara',
  'Donald',
  'Frances',
  'Ken',
  'Margaret',
  'Dennis',
  'Radia',
  'John',
  'Leslie',
  'Shafi',
  'Niklaus',
  'Sophie',
  'Tim',
  'Katherine',
  'Yukihiro',
  'Guido',
  'Anders',
  'Bjarne',
  'Hedy',
  'Claude',
  'Ida',
  'Mary',
  'Linus',
  'Rasmus',
  'Brendan',
  'Joan',
  'Kristen',
  'Ole',
];
const LAST = [
  'Lovelace',
  'Hopper',
  'Turing',
  'Dijkstra',
  'Liskov',
  'Knuth',
  'Allen',
  'Thompson',
  'Hamilton',
  'Ritchie',
  'Perlman',
  'McCarthy',
  'Lamport',
  'Goldwasser',
  'Wirth',
  'Wilson',
  'Berners-Lee',
  'Johnson',
  'Matsumoto',
  'van Rossum',
  'Hejlsberg',
  'Stroustrup',
  'Lamarr',
  'Shannon',
  'Rhodes',
  'Jackson',
  'Torvalds',
  'Lerdorf',
  'Eich',
  'Clarke',
  'Nygaard',
  'Dahl',
  'Müller',
  'Søndergaard',
  'Núñez',
  'O’Brien',
];
const DEPARTMENTS = [
  'Engineering',
  'Sales, Île-de-France',
  'Sales, Americas',
  'Finance',
  'People',
  'Support',
  'Marketing',
  'Legal',
];
const TITLES = [
  'Engineer',
  'Senior Engineer',
  'Staff Engineer',
  'Account Executive',
  'Analyst',
  'Manager',
  'Director',
  'Specialist',
];
const CURRENCIES = ['USD', 'EUR', 'GBP', 'JPY', 'CAD', 'AUD', 'CHF', 'SEK'];
const RATES = { EUR: 0.92, GBP: 0.79, JPY: 151.3, CAD: 1.36, AUD: 1.52, CHF: 0.88, SEK: 10.41 };

const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');
/** A fixed, valid id: `prefix_` + a v4-shaped lowercase UUID built from numbers. */
const idOf = (prefix: 'mc' | 'mce', a: number, b: number) =>
  `${prefix}_${hex(a, 8)}-0000-4000-8000-${hex(b, 12)}`;

type EmployeeInput = NonNullable<DataSetInput['meritCycles'][number]['employees']>[number];

// Band targets by job level (L1–L7), in the cycles' currency (USD).
const BAND_TARGET = [70_000, 85_000, 105_000, 130_000, 160_000, 195_000, 240_000];

/**
 * The typed columns of employee `index` (docs/import-format.md, "Column types"): amounts in
 * the cycle's currency (USD), decimal strings, a number given as a JSON number (which the
 * import writes as its decimal string), a date and a boolean, some nulls.
 */
function typedColumns(index: number, level: number) {
  const target = BAND_TARGET[level - 1] ?? 100_000;
  const compa = 0.85 + (index % 31) / 100;
  const base = Math.round((target * compa) / 100) * 100;
  const usd = (value: number) => ({ USD: value.toFixed(2) });
  return {
    basePay: { name: 'Base Pay', type: 'currency', value: usd(base) },
    compBandTargetBasePay: {
      name: 'Comp Band Target Base Pay',
      type: 'currency',
      value: usd(target),
    },
    currentCompaRatio: {
      name: 'Current Compa Ratio',
      type: 'number',
      value: (base / target).toFixed(4),
    },
    currentRangePenetration: {
      name: 'Current Range Penetration',
      type: 'number',
      value: Math.round(((base - target * 0.8) / (target * 0.4)) * 10_000) / 10_000,
    },
    annualBonusCash: {
      name: 'Annual Bonus Cash',
      type: 'currency',
      value: index % 10 === 0 ? null : usd(base * 0.1),
    },
    hireDate: {
      name: 'Hire Date',
      type: 'date',
      value: `20${String(10 + (index % 15)).padStart(2, '0')}-${String((index % 12) + 1).padStart(2, '0')}-${String((index % 28) + 1).padStart(2, '0')}`,
    },
    isPeopleManager: { name: 'People Manager', type: 'boolean', value: index % 8 === 0 },
  };
}

/**
 * Employee `index` of a cycle: about 1,000 bytes of JSON (a text, a composite and seven
 * typed columns), names repeat as they do in life.
 */
export function employee(cycleNumber: number, index: number, domain: string): EmployeeInput {
  const first = FIRST[(index * 7 + cycleNumber) % FIRST.length] ?? 'Ada';
  const last = LAST[(index * 13 + (index >> 5)) % LAST.length] ?? 'Lovelace';
  const level = (index % 7) + 1;
  return {
    id: idOf('mce', cycleNumber, index),
    email: `${first}.${last}.${index}@${domain}`.toLowerCase().replace(/[^a-z0-9.@-]/g, ''),
    firstName: first,
    lastName: last,
    preferredName: index % 11 === 0 ? first.slice(0, 3) : null,
    currencyCode: CURRENCIES[index % CURRENCIES.length] ?? 'USD',
    eligibilityStatus: index % 9 === 0 ? 'ineligible' : 'eligible',
    columns: {
      department: {
        name: 'Department',
        type: 'text',
        value: DEPARTMENTS[index % DEPARTMENTS.length] ?? '',
      },
      employee: {
        name: 'Employee',
        type: 'composite',
        value: {
          fullName: `${first} ${last}`,
          jobLevel: `L${level}`,
          jobTitle: TITLES[(index >> 3) % TITLES.length] ?? '',
        },
      },
      ...typedColumns(index, level),
    },
  };
}

export function cycle(cycleNumber: number, name: string, employees: EmployeeInput[], id?: string) {
  const year = 2015 + (cycleNumber % 11);
  const statuses = ['active', 'inactive', 'finalized'] as const;
  return {
    id: id ?? idOf('mc', cycleNumber, cycleNumber),
    name,
    status: statuses[cycleNumber % 3] ?? 'active',
    startDate: `${year}-0${(cycleNumber % 9) + 1}-01T00:00:00.000Z`,
    endDate: `${year}-12-31T23:59:59.999Z`,
    createdDate: `${year - 1}-11-${String((cycleNumber % 28) + 1).padStart(2, '0')}T09:30:00.000Z`,
    currency: 'USD',
    exchangeRates: RATES,
    employees,
  };
}

export const organizationSlug = (n: number) => `bench-${String(n + 1).padStart(2, '0')}`;

/** Text written in blocks of about 1 MiB, so that generating costs little memory. */
class FileWriter {
  private readonly fd: number;
  private pending: string[] = [];
  private size = 0;
  bytes = 0;
  constructor(path: string) {
    this.fd = openSync(path, 'w');
  }
  write(text: string) {
    this.pending.push(text);
    this.size += text.length;
    if (this.size > 1 << 20) this.flush();
  }
  private flush() {
    const block = Buffer.from(this.pending.join(''), 'utf8');
    writeSync(this.fd, block);
    this.bytes += block.length;
    this.pending = [];
    this.size = 0;
  }
  close() {
    this.flush();
    // On disk before any import is timed: otherwise the kernel writes the generated
    // files back (900 MiB) while the first imports run, on the same two cores.
    fsyncSync(this.fd);
    closeSync(this.fd);
  }
}

interface DataFile {
  name: string;
  path: string;
  employees: number;
  bytes: number;
}

/**
 * The organisation files: NDJSON (the organisation, each cycle, then its employees), or
 * the same data set as one JSON object each.
 */
/**
 * The employee with its columns' types made open (`x-currency`, `x-composite`): the import
 * keeps an open type's value as it is, unchecked, so that importing the same data both
 * ways in one run measures what the checks of the six known types cost (--open-types).
 */
function withOpenTypes(employee: EmployeeInput): EmployeeInput {
  const columns = Object.entries(employee.columns ?? {}).map(
    ([key, column]) => [key, { ...column, type: `x-${column.type}` }] as const,
  );
  return { ...employee, columns: Object.fromEntries(columns) };
}

function writeOrganizationFiles(
  dir: string,
  total: number,
  format: Format,
  openTypes = false,
): DataFile[] {
  const cycles = ORGANIZATIONS * CYCLES_PER_ORGANIZATION;
  const perCycle = Math.floor(total / cycles);
  const files: DataFile[] = [];
  for (let org = 0; org < ORGANIZATIONS; org++) {
    const slug = organizationSlug(org);
    const path = join(dir, `${slug}.${format}`);
    const out = new FileWriter(path);
    const organization = { slug, name: `Bench ${org + 1}`, apiKeysEnabled: true };
    if (format === 'ndjson') out.write(`${JSON.stringify({ organization })}\n`);
    else out.write(`${JSON.stringify({ organization }).slice(0, -1)},"meritCycles":[\n`);
    let employees = 0;
    for (let c = 0; c < CYCLES_PER_ORGANIZATION; c++) {
      const cycleNumber = org * CYCLES_PER_ORGANIZATION + c + 1;
      const count = perCycle + (cycleNumber <= total % cycles ? 1 : 0);
      const { employees: _none, ...fields } = cycle(cycleNumber, `Merit cycle ${cycleNumber}`, []);
      if (format === 'ndjson') out.write(`${JSON.stringify({ meritCycle: fields })}\n`);
      else
        out.write(`${c === 0 ? '' : ',\n'}${JSON.stringify(fields).slice(0, -1)},"employees":[\n`);
      for (let i = 0; i < count; i++) {
        const generated = employee(cycleNumber, i, `${slug}.example`);
        const value = openTypes ? withOpenTypes(generated) : generated;
        if (format === 'ndjson') {
          out.write(`${JSON.stringify({ employee: value, meritCycle: fields.id })}\n`);
        } else out.write(`${i === 0 ? '' : ',\n'}${JSON.stringify(value)}`);
      }
      if (format === 'json') out.write(']}');
      employees += count;
    }
    if (format === 'json') out.write(']}\n');
    out.close();
    files.push({ name: slug, path, employees, bytes: out.bytes });
  }
  return files;
}

type Format = 'ndjson' | 'json';

const DEEP_ORGANIZATION_LINE = {
  slug: DEEP_ORGANIZATION,
  name: 'Bench deep',
  apiKeysEnabled: true,
};

/** The deep cycle in one NDJSON file (larger than a JSON data set may be). */
function writeDeepFile(
  dir: string,
  deep: number,
  changedEvery = 0,
  sliceColumns = false,
): DataFile {
  const deepEmployee = (i: number) => {
    const generated = employee(DEEP_CYCLE_NUMBER, i, 'deep.example');
    const stored = sliceColumns ? withSliceColumns(generated, i) : generated;
    return changedEvery > 0 && i % changedEvery === 0
      ? { ...stored, preferredName: `Changed ${i}` }
      : stored;
  };
  const path = join(dir, `${DEEP_ORGANIZATION}.ndjson`);
  const out = new FileWriter(path);
  const { employees: _none, ...fields } = cycle(0, 'Deep cycle', [], DEEP_CYCLE);
  out.write(`${JSON.stringify({ organization: DEEP_ORGANIZATION_LINE })}\n`);
  out.write(`${JSON.stringify({ meritCycle: fields })}\n`);
  for (let i = 0; i < deep; i++) {
    out.write(`${JSON.stringify({ employee: deepEmployee(i), meritCycle: DEEP_CYCLE })}\n`);
  }
  out.close();
  return {
    name: DEEP_ORGANIZATION,
    path,
    employees: deep,
    bytes: out.bytes,
  };
}

/**
 * Organisation `bench-tenth`: one cycle of `count` employees made from the deep cycle's
 * indices 0, 10, 20, … (its 10 % slice) with the --slices columns, under ids of their own.
 */
function writeTenthFile(dir: string, count: number): DataFile {
  const path = join(dir, `${TENTH_ORGANIZATION}.ndjson`);
  const out = new FileWriter(path);
  const { employees: _none, ...fields } = cycle(1, 'Tenth cycle', [], TENTH_CYCLE);
  const organization = { slug: TENTH_ORGANIZATION, name: 'Bench tenth', apiKeysEnabled: true };
  out.write(`${JSON.stringify({ organization })}\n`);
  out.write(`${JSON.stringify({ meritCycle: fields })}\n`);
  for (let i = 0; i < count; i++) {
    // tenth.example: as long as deep.example, so that each row is as large as the slice's.
    const value = withSliceColumns(
      employee(DEEP_CYCLE_NUMBER + 1, i * 10, 'tenth.example'),
      i * 10,
    );
    out.write(`${JSON.stringify({ employee: value, meritCycle: TENTH_CYCLE })}\n`);
  }
  out.close();
  return { name: TENTH_ORGANIZATION, path, employees: count, bytes: out.bytes };
}

interface Measured {
  seconds: number;
  peakMiB: number;
  output: string;
}

/** The high-water mark of a process's resident memory, in KiB (Linux). */
function peakKib(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /VmHWM:\s+(\d+) kB/.exec(status);
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined; // exited between two samples
  }
}

/** Runs a process to its end: wall time, and its peak RSS sampled every 100 ms. */
function measure(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<Measured> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    let peak = 0;
    const sample = () => {
      if (child.pid !== undefined) peak = Math.max(peak, peakKib(child.pid) ?? 0);
    };
    const timer = setInterval(sample, 100);
    child.on('exit', (code) => {
      clearInterval(timer);
      const seconds = (performance.now() - started) / 1000;
      if (code !== 0) reject(new Error(`${args.join(' ')} exited ${code}:\n${output}`));
      else resolve({ seconds, peakMiB: peak / 1024, output });
    });
  });
}

const BIN = join(import.meta.dirname, '..', 'bin', 'compplan.js');

function importFile(file: DataFile, databaseUrl: string): Promise<Measured> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' };
  // Executed, not `node BIN`: its first line's V8 flags are part of what users run.
  return measure(BIN, ['import', file.path], env);
}

/** Baseline 1: read the file and JSON.parse every line — no validation, no database. */
const PARSE_ONLY = `
const { createInterface } = require('node:readline');
const { createReadStream } = require('node:fs');
(async () => {
  let n = 0;
  for await (const line of createInterface({ input: createReadStream(process.argv[1]), crlfDelay: Infinity })) {
    if (line) { JSON.parse(line); n++; }
  }
  process.stdout.write(n + ' lines\\n');
})();
`;

/** Baseline 2: the same rows inserted bare into a scratch database of the same schema. */
async function bareInsert(files: DataFile[], databaseUrl: string): Promise<number> {
  const started = performance.now();
  if (databaseUrl.startsWith('sqlite:')) {
    const sqlite = new SQLite(databaseUrl.slice('sqlite:'.length));
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('foreign_keys = ON');
    const insertOrganization = sqlite.prepare(
      `insert into organizations (id, slug, name, api_keys_enabled, created_at) values (?, ?, ?, 1, '2025-01-01T00:00:00.000Z')`,
    );
    const insertCycle = sqlite.prepare(
      `insert into merit_cycles (id, organization_id, name, status, start_date, end_date, created_date, currency, exchange_rates) values (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const insertEmployee = sqlite.prepare(
      `insert into merit_cycle_employees (id, organization_id, merit_cycle_id, email, email_key, first_name, last_name, preferred_name, currency_code, currency_name, eligibility_status, body) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    for (const file of files) {
      sqlite.exec('begin immediate');
      let organizationId = '';
      for await (const line of lines(file.path)) {
        const record = JSON.parse(line);
        if (record.organization) {
          organizationId = `org_${record.organization.slug}`;
          insertOrganization.run(
            organizationId,
            record.organization.slug,
            record.organization.name,
          );
        } else if (record.employee) {
          const e = record.employee;
          insertEmployee.run(...employeeRow(e, organizationId, record.meritCycle));
        } else {
          const c = record.meritCycle;
          insertCycle.run(...cycleRow(c, organizationId));
        }
      }
      sqlite.exec('commit');
    }
    sqlite.close();
  } else {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    const columns = 12;
    const insert = `insert into merit_cycle_employees (id, organization_id, merit_cycle_id, email, email_key, first_name, last_name, preferred_name, currency_code, currency_name, eligibility_status, body) select * from unnest(${Array.from({ length: columns }, (_, i) => `$${i + 1}::text[]`).join(', ')})`;
    for (const file of files) {
      await client.query('begin');
      let organizationId = '';
      let batch: unknown[][] = [];
      const flush = async () => {
        if (batch.length === 0) return;
        const rows = batch;
        batch = [];
        await client.query(
          insert,
          Array.from({ length: columns }, (_, i) => rows.map((row) => row[i])),
        );
      };
      for await (const line of lines(file.path)) {
        const record = JSON.parse(line);
        if (record.organization) {
          organizationId = `org_${record.organization.slug}`;
          await client.query(
            `insert into organizations (id, slug, name, api_keys_enabled, created_at) values ($1, $2, $3, true, now())`,
            [organizationId, record.organization.slug, record.organization.name],
          );
        } else if (record.employee) {
          batch.push(employeeRow(record.employee, organizationId, record.meritCycle));
          if (batch.length >= 5_000) await flush();
        } else {
          await flush();
          const c = record.meritCycle;
          await client.query(
            `insert into merit_cycles (id, organization_id, name, status, start_date, end_date, created_date, currency, exchange_rates) values ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
            cycleRow(c, organizationId),
          );
        }
      }
      await flush();
      await client.query('commit');
    }
    await client.end();
  }
  return (performance.now() - started) / 1000;
}

/** A merit cycle line's values for the bare insert of the baseline, in column order. */
function cycleRow(
  c: {
    id: string;
    name: string;
    status: string;
    startDate: string;
    endDate: string;
    createdDate: string;
    currency: string;
    exchangeRates: unknown;
  },
  organizationId: string,
): unknown[] {
  return [
    c.id,
    organizationId,
    c.name,
    c.status,
    c.startDate,
    c.endDate,
    c.createdDate,
    c.currency,
    JSON.stringify(c.exchangeRates),
  ];
}

// biome-ignore lint/suspicious/noExplicitAny: the generator's own employees, parsed back
function employeeRow(e: any, organizationId: string, meritCycleId: string): unknown[] {
  const currency = { code: e.currencyCode, value: e.currencyCode };
  return [
    e.id,
    organizationId,
    meritCycleId,
    e.email,
    e.email.toLowerCase(),
    e.firstName,
    e.lastName,
    e.preferredName,
    currency.code,
    currency.value,
    e.eligibilityStatus,
    JSON.stringify({ ...e, currencyCode: currency }),
  ];
}

async function* lines(path: string): AsyncGenerator<string> {
  for await (const line of createInterface({
    input: createReadStream(path),
    crlfDelay: Infinity,
  })) {
    if (line) yield line;
  }
}

/** A scratch database of the same schema for the bare-insert baseline, and its removal. */
async function scratchDatabase(databaseUrl: string, dir: string) {
  if (databaseUrl.startsWith('sqlite:')) {
    const path = join(dir, 'baseline.db');
    const url = `sqlite:${path}`;
    const handle = openDatabase({ dialect: 'sqlite', path });
    await migrateToLatest(handle);
    await handle.close();
    return { url, drop: async () => undefined };
  }
  const name = `compplan_bench_baseline_${process.pid}`;
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const target = new URL(databaseUrl);
  target.pathname = `/${name}`;
  const url = target.toString();
  const handle = openDatabase({ dialect: 'postgres', url });
  await migrateToLatest(handle);
  await handle.close();
  return {
    url,
    drop: async () => {
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};

async function main() {
  const { values } = parseFlags({
    options: {
      employees: { type: 'string', default: '1000000' },
      deep: { type: 'string', default: '500000' },
      database: { type: 'string' },
      'only-load': { type: 'boolean', default: false },
      format: { type: 'string', default: 'ndjson' },
      'change-deep': { type: 'string' },
      // Keeps the generated files (their directory is printed), e.g. to profile one import.
      keep: { type: 'boolean', default: false },
      // Every column's type open (x-currency, …): the same data, its types unchecked.
      'open-types': { type: 'boolean', default: false },
      // The row slices' columns and the bench-tenth cycle (bench/slices.ts).
      slices: { type: 'boolean', default: false },
    },
  });
  const total = wholeNumberFlag('employees', values.employees, 1);
  const deep = wholeNumberFlag('deep', values.deep, 0);
  const full = !values['only-load'];
  const format = oneOfFlag<Format>('format', values.format, ['ndjson', 'json']);
  const config = loadConfig({
    ...process.env,
    ...(values.database ? { DATABASE_URL: values.database } : {}),
  });
  const databaseUrl =
    config.database.dialect === 'sqlite' ? `sqlite:${config.database.path}` : config.database.url;
  const database = openDatabase(config.database);
  await migrateToLatest(database);
  await database.close();

  const dir = mkdtempSync(join(tmpdir(), 'compplan-bench-data-'));
  if (values['change-deep'] !== undefined) {
    const percent = wholeNumberFlag('change-deep', values['change-deep'], 1, 100);
    try {
      const file = writeDeepFile(dir, deep, Math.round(100 / percent), values.slices);
      const result = await importFile(file, databaseUrl);
      log(
        `the deep cycle again with ${percent} % of its employees changed: ${result.seconds.toFixed(1)} s (${result.output.trim().split('\n').at(-1)?.trim() ?? ''})`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    return;
  }
  try {
    let started = performance.now();
    const files = writeOrganizationFiles(dir, total, format, values['open-types']);
    const deepFiles = deep > 0 ? [writeDeepFile(dir, deep, 0, values.slices)] : [];
    if (values.slices && deep >= 10) files.push(writeTenthFile(dir, Math.floor(deep / 10)));
    // Imported twice: created, then all matched and unchanged.
    if (deep > 0 && full && deepFiles[0])
      deepFiles.push({ ...deepFiles[0], name: `${DEEP_ORGANIZATION} again` });
    const bytes = [...files, ...deepFiles].reduce((sum, file) => sum + file.bytes, 0);
    log(
      `generated ${files.length + deepFiles.length} files (${mib(bytes)}) in ${seconds(started)} s`,
    );

    const load = async (file: DataFile) => {
      const result = await importFile(file, databaseUrl);
      const summary = result.output.trim().split('\n').at(-1)?.trim() ?? '';
      log(
        `  ${file.name.padEnd(22)} ${String(file.employees).padStart(7)} employees  ${mib(file.bytes).padStart(8)}  ${result.seconds.toFixed(1).padStart(5)} s  peak RSS ${result.peakMiB.toFixed(0).padStart(3)} MiB  (${summary})`,
      );
      return result;
    };
    log(
      `importing into ${config.database.dialect} (bin/compplan.js import FILE, one process per file):`,
    );
    started = performance.now();
    const organizations: Measured[] = [];
    for (const file of files) organizations.push(await load(file));
    const organizationSeconds = (performance.now() - started) / 1000;
    const deepRuns: Measured[] = [];
    for (const file of deepFiles) deepRuns.push(await load(file));

    const peak = (runs: Measured[]) => Math.max(0, ...runs.map((run) => run.peakMiB));
    const results = [
      `${total} employees in ${ORGANIZATIONS * CYCLES_PER_ORGANIZATION} cycles (${files.length} ${format.toUpperCase()} files): ${organizationSeconds.toFixed(1)} s; peak RSS of an import ${peak(organizations).toFixed(0)} MiB (median ${median(organizations.map((run) => run.peakMiB)).toFixed(0)} MiB)`,
    ];
    if (deepRuns[0]) {
      results.push(
        `${deep} employees in one cycle (one NDJSON file, created): ${deepRuns[0].seconds.toFixed(1)} s; peak RSS ${deepRuns[0].peakMiB.toFixed(0)} MiB`,
      );
    }
    if (deepRuns[1]) {
      results.push(
        `the same file again (all matched, unchanged): ${deepRuns[1].seconds.toFixed(1)} s; peak RSS ${deepRuns[1].peakMiB.toFixed(0)} MiB`,
      );
    }

    // The baselines read NDJSON lines: made in the NDJSON run.
    if (full && format === 'ndjson') {
      started = performance.now();
      for (const file of files) {
        await measure(process.execPath, ['-e', PARSE_ONLY, file.path], process.env);
      }
      const parseSeconds = (performance.now() - started) / 1000;
      const scratch = await scratchDatabase(databaseUrl, dir);
      let insertSeconds: number;
      try {
        insertSeconds = await bareInsert(files, scratch.url);
      } finally {
        await scratch.drop();
      }
      results.push(
        `baseline, the same ${files.length} files read and JSON.parse'd line by line (one process each): ${parseSeconds.toFixed(1)} s — the import takes ${(organizationSeconds / parseSeconds).toFixed(1)}×`,
        `baseline, the same rows inserted bare (no validation, no staging, no matching) into an empty database: ${insertSeconds.toFixed(1)} s — the import takes ${(organizationSeconds / insertSeconds).toFixed(2)}×`,
      );
    }
    console.log(results.join('\n'));
  } finally {
    if (values.keep) log(`files kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

function seconds(started: number) {
  return ((performance.now() - started) / 1000).toFixed(1);
}

function log(line: string) {
  process.stderr.write(`${line}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
