// npm run bench:data -- --employees N [--deep N] [--database URL]
//
// A realistic large data set, loaded through the real import path (parseDataSet →
// importDataSet, what `compplan import` runs): --employees employees (default 1,000,000)
// in 200 merit cycles over 20 organisations (bench-01 … bench-20, 10 cycles each), plus
// one organisation `bench-deep` with one cycle of --deep employees (default 500,000; 0 for
// none) for the deep-page benchmark. Deterministic: the same arguments give the same ids
// and values, so a rerun changes nothing.
//
// Each organisation is one data set (one transaction, all or nothing). The deep cycle is
// loaded in slices of --slice employees (default 25,000), each an import of the same cycle
// that lists only its slice (imports keep employees a file does not list), so that no
// process ever holds half a million employees in memory. Prints the time and the peak
// resident memory (maxRSS) of this process. Not part of npm test.
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import { type DatabaseHandle, openDatabase } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { importDataSet } from '../src/import/load.js';
import { parseDataSet } from '../src/import/parse.js';
import type { DataSetInput } from '../src/import/schema.js';

export const ORGANIZATIONS = 20;
export const CYCLES_PER_ORGANIZATION = 10;
export const DEEP_ORGANIZATION = 'bench-deep';
export const DEEP_CYCLE = 'mc_d0000000-0000-4000-8000-000000000001';

const FIRST = [
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
  'Østergaard',
  'Ñúñez',
  'O’Brien',
];
const DEPARTMENTS = [
  'Engineering',
  'Sales, EMEA',
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

/** Employee `index` of a cycle: about 450 bytes of JSON, names repeat as they do in life. */
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

async function main() {
  const { values } = parseArgs({
    options: {
      employees: { type: 'string', default: '1000000' },
      deep: { type: 'string', default: '500000' },
      slice: { type: 'string', default: '25000' },
      database: { type: 'string' },
    },
  });
  const total = Number(values.employees);
  const deep = Number(values.deep);
  const slice = Number(values.slice);
  const config = loadConfig({
    ...process.env,
    ...(values.database ? { DATABASE_URL: values.database } : {}),
  });
  const database: DatabaseHandle = openDatabase(config.database);
  await migrateToLatest(database);
  const started = performance.now();
  const cycles = ORGANIZATIONS * CYCLES_PER_ORGANIZATION;
  const perCycle = Math.floor(total / cycles);
  let loaded = 0;
  for (let org = 0; org < ORGANIZATIONS; org++) {
    const slug = organizationSlug(org);
    const meritCycles = [];
    for (let c = 0; c < CYCLES_PER_ORGANIZATION; c++) {
      const cycleNumber = org * CYCLES_PER_ORGANIZATION + c + 1;
      const count = perCycle + (cycleNumber <= total % cycles ? 1 : 0);
      const employees = Array.from({ length: count }, (_, i) =>
        employee(cycleNumber, i, `${slug}.example`),
      );
      meritCycles.push(cycle(cycleNumber, `Merit cycle ${cycleNumber}`, employees));
      loaded += count;
    }
    await importDataSet(
      database,
      parseDataSet({
        organization: { slug, name: `Bench ${org + 1}`, apiKeysEnabled: true },
        meritCycles,
      }),
    );
    progress(`${slug}: ${loaded} employees`, started);
  }
  for (let from = 0; from < deep; from += slice) {
    const employees = Array.from({ length: Math.min(slice, deep - from) }, (_, i) =>
      employee(100_000, from + i, 'deep.example'),
    );
    await importDataSet(
      database,
      parseDataSet({
        organization: { slug: DEEP_ORGANIZATION, name: 'Bench deep', apiKeysEnabled: true },
        meritCycles: [cycle(0, 'Deep cycle', employees, DEEP_CYCLE)],
      }),
    );
    progress(`${DEEP_ORGANIZATION}: ${from + employees.length} employees`, started);
  }
  await database.db.destroy();
  const seconds = (performance.now() - started) / 1000;
  const peakMiB = process.resourceUsage().maxRSS / 1024;
  console.log(
    `loaded ${loaded + deep} employees (${loaded} in ${cycles} cycles, ${deep} in the deep cycle) into ${config.database.dialect} in ${seconds.toFixed(1)} s; peak RSS ${peakMiB.toFixed(0)} MiB`,
  );
}

function progress(what: string, started: number) {
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const rss = (process.memoryUsage().rss / 2 ** 20).toFixed(0);
  process.stderr.write(`  ${seconds} s  ${what}  (RSS ${rss} MiB)\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
