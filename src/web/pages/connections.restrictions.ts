// Settings → Connections: what a key may read and until when (docs/api-keys.md, "Least
// privilege"), the web form of `compplan keys create --cycles --hide-columns
// --hide-column-types --allow-unknown-columns --expires-* --allow-ips` and `keys roll`.
// The form is read into a KeyForm first, which never fails: a refused form is shown again
// from it with every choice as it was sent, and a key is made from it exactly as it was
// shown (issue #44: a refused form that came back reset made a wider key). The same
// service checks the form and the CLI; its one-line messages name the CLI's options, which
// the form shows under its own labels.
import type { FastifyRequest } from 'fastify';
import { parseRange } from '../../address-ranges.js';
import { KeyManagementError } from '../../api-keys/errors.js';
import type { ApiKey } from '../../api-keys/repository.js';
import { DEFAULT_GRACE, EXPIRING_SOON_MS, parseList } from '../../api-keys/restrictions.js';
import { type ColumnGroup, columnChoicesOf, type NewKeyInput } from '../../api-keys/service.js';
import { COLUMN_TYPES } from '../../columns/types.js';
import type { Db } from '../../db/connect.js';
import { textColumnsOf } from '../../row-slices/columns.js';
import type { Organization } from '../../tenancy/organizations.js';
import { html, type SafeHtml } from '../html.js';
import { formField } from '../http.js';
import { PAGES } from '../paths.js';

/**
 * What the generate form offers: the organisation's cycles, its columns by type, the text
 * columns (and text parts) a slice's conditions may name, and its manager column (null:
 * none, so no "Reports to").
 */
export interface KeyChoices {
  cycles: { id: string; name: string }[];
  columns: ColumnGroup[];
  textColumns: string[];
  managerColumn: string | null;
}

export async function keyChoices(
  db: Db,
  organization: Pick<Organization, 'id' | 'slug' | 'managerColumn'>,
): Promise<KeyChoices> {
  const cycles = await db
    .selectFrom('merit_cycles')
    .select(['id', 'name'])
    .where('organization_id', '=', organization.id)
    .orderBy('created_date', 'desc')
    .orderBy('id')
    .execute();
  const columns = await columnChoicesOf(db, organization.slug);
  return {
    cycles,
    columns,
    textColumns: textColumnsOf(columns.flatMap((group) => group.columns)).sort(),
    managerColumn: organization.managerColumn,
  };
}

// One field name per checkbox (the form parser keeps one value per name): the prefix and
// what it chooses.
const CYCLE_FIELD = 'cycle:';
const COLUMN_FIELD = 'column:';
const COLUMN_TYPE_FIELD = 'columnType:';

export const EXPIRY_CHOICES = [
  ['', 'Never'],
  ['7d', '7 days'],
  ['30d', '30 days'],
  ['90d', '90 days'],
  ['365d', '1 year'],
] as const;

export const GRACE_CHOICES = [
  ['0s', 'None: the old secret stops at once'],
  ['1h', '1 hour'],
  ['24h', '24 hours'],
  ['7d', '7 days'],
  ['30d', '30 days'],
] as const;

export const CONTRADICTORY_SCOPE =
  'No API key was generated: merit cycles were ticked, but “Every merit cycle” was chosen. Choose “Only these” to restrict the key to the ticked cycles, or untick them.';

/** The generate form as it was sent: every choice, as text and ticks, unchecked. */
export interface KeyForm {
  name: string;
  /** `some`: only the ticked cycles; anything else: every cycle. */
  scope: string;
  cycles: string[];
  /** Column keys ticked in the picker. */
  columns: string[];
  columnTypes: string[];
  /** Column keys typed, comma-separated (columns of data still to come). */
  otherColumns: string;
  allowUnknownColumns: boolean;
  expiresIn: string;
  expiresAt: string;
  allowIps: string;
  /** The slice's conditions, as `--rows` takes them. */
  rows: string;
  /** The manager's email whose reporting line the key reads. */
  reportsTo: string;
}

export const EMPTY_KEY_FORM: KeyForm = {
  name: '',
  scope: 'all',
  cycles: [],
  columns: [],
  columnTypes: [],
  otherColumns: '',
  allowUnknownColumns: false,
  expiresIn: '',
  expiresAt: '',
  allowIps: '',
  rows: '',
  reportsTo: '',
};

/** The generate form of a post, whatever it holds. */
export function keyFormOf(request: FastifyRequest): KeyForm {
  const body = (request.body ?? {}) as Record<string, unknown>;
  const ticked = (prefix: string) =>
    Object.keys(body)
      .filter((name) => name.startsWith(prefix) && body[name] === 'on')
      .map((name) => name.slice(prefix.length));
  return {
    name: formField(request, 'name'),
    scope: formField(request, 'scope') === 'some' ? 'some' : 'all',
    cycles: ticked(CYCLE_FIELD),
    columns: ticked(COLUMN_FIELD),
    columnTypes: ticked(COLUMN_TYPE_FIELD),
    otherColumns: formField(request, 'otherColumns'),
    allowUnknownColumns: formField(request, 'allowUnknownColumns') === 'on',
    expiresIn: formField(request, 'expiresIn'),
    expiresAt: formField(request, 'expiresAt'),
    allowIps: formField(request, 'allowIps'),
    rows: formField(request, 'rows'),
    reportsTo: formField(request, 'reportsTo'),
  };
}

// What the address field takes, said in every refusal of it (src/address-ranges.ts).
const ACCEPTED_ADDRESSES =
  'It takes single addresses, such as 127.0.0.1 or 2001:db8::1, and CIDR ranges, such as 10.20.0.0/24, separated by commas or new lines.';

/** `10.20.0.*` as the CIDR range it means (`10.20.0.0/24`); undefined if it means none. */
function rangeOfWildcard(text: string): string | undefined {
  const parts = text.split('.');
  const first = parts.indexOf('*');
  if (parts.length !== 4 || first < 1 || parts.slice(first).some((part) => part !== '*')) {
    return undefined;
  }
  const range = `${parts.map((part) => (part === '*' ? '0' : part)).join('.')}/${first * 8}`;
  return parseRange(range) ? range : undefined;
}

/**
 * The addresses typed, one a line or separated by commas; undefined for none. A wildcard
 * or a semicolon, which other products take, is refused with what this field takes: read
 * as written, `10.20.0.*; 127.0.0.1` is no address at all.
 */
export function addressesOf(text: string): string[] | undefined {
  const lines = text
    .split(/\r?\n/)
    .map((line) => line.trim().replace(/,$/, ''))
    .filter((line) => line.length > 0);
  if (lines.length === 0) return undefined;
  const problems: string[] = [];
  const wildcard = lines
    .flatMap((line) => line.split(/[,;\s]+/))
    .find((item) => item.includes('*'));
  if (wildcard !== undefined) {
    const range = rangeOfWildcard(wildcard);
    problems.push(
      `“${wildcard}” has a wildcard (*), which this field does not take: write the range as ${range ?? 'a CIDR range'}${range ? ' (CIDR)' : ''}.`,
    );
  }
  if (lines.some((line) => line.includes(';'))) {
    problems.push('Separate addresses with commas or new lines, not semicolons.');
  }
  if (problems.length > 0) {
    throw new KeyManagementError(`Allowed addresses: ${problems.join(' ')} ${ACCEPTED_ADDRESSES}`);
  }
  return parseList(lines.join(','), '--allow-ips');
}

/**
 * The key a form asks for, as the key service takes it: exactly what the form showed.
 * Cycles ticked under "every merit cycle" are refused, never ignored: whoever ticked them
 * believes the key restricted, and a key must never read more than its maker meant.
 */
export function keyInputOf(form: KeyForm): Omit<NewKeyInput, 'org'> {
  if (form.scope !== 'some' && form.cycles.length > 0) {
    throw new KeyManagementError(CONTRADICTORY_SCOPE);
  }
  const typed =
    form.otherColumns.trim() === '' ? [] : parseList(form.otherColumns, '--hide-columns');
  // A column both ticked and typed is hidden once: either way it is hidden.
  const hidden = [...new Set([...form.columns, ...typed])];
  const expiresAt = form.expiresAt.trim();
  return {
    name: form.name,
    cycles: form.scope === 'some' ? form.cycles : undefined,
    hiddenColumns: hidden.length === 0 ? undefined : hidden,
    allowUnknownColumns: form.allowUnknownColumns,
    hiddenColumnTypes: form.columnTypes.length === 0 ? undefined : form.columnTypes,
    expiresIn: form.expiresIn === '' ? undefined : form.expiresIn,
    expiresAt: expiresAt === '' ? undefined : expiresAt,
    allowedAddresses: addressesOf(form.allowIps),
    rows: form.rows.trim() === '' ? undefined : form.rows,
    reportsTo: form.reportsTo.trim() === '' ? undefined : form.reportsTo.trim(),
  };
}

// The service's words for the command line, in the form's: its labels for the options,
// and the form's remedies where the CLI's name a flag. The longer options first.
const FIELD_LABELS: [RegExp, string][] = [
  [
    /To hide a column of data still to come, add --allow-unknown-columns\./g,
    'Tick the column under Hidden columns instead; or, to hide a column your data does not have yet, tick “Columns of data still to come”.',
  ],
  [
    /or every column and part of a type with --hide-column-types (\w+)/g,
    'or every column and part of a type by ticking $1 under “Hide whole types”',
  ],
  [/--hide-column-types/g, 'Hide whole types'],
  [/--cycles/g, 'Merit cycles'],
  [/--hide-columns/g, 'Hidden columns'],
  [/--expires-in/g, 'Expires'],
  [/--expires-at/g, 'Expiry date'],
  [/--grace/g, 'Grace period'],
  [/--allow-ips/g, 'Allowed addresses'],
  [/--rows/g, 'Rows'],
  [/--reports-to/g, 'Reports to'],
  [
    /name it first with compplan orgs set \S+ --manager-column KEY \(or under Settings → Roles & Permissions\)/g,
    'an owner names it under Settings → Roles & Permissions',
  ],
  [/ \(leave it out for every cycle\)/g, ' (or choose every merit cycle)'],
  [/ \(leave it out for any address\)/g, ' (or leave the field empty for any address)'],
];

/** A key service message in the form's words. */
export function formMessage(message: string): string {
  return FIELD_LABELS.reduce((text, [option, label]) => text.replace(option, label), message);
}

/**
 * A select's options with `chosen` selected; a value sent that is none of them (a post not
 * made by this form) is offered as it was sent, so that the form never shows, and sends
 * again, another choice than the one refused.
 */
function choiceOptions(
  choices: readonly (readonly [string, string])[],
  chosen: string,
): SafeHtml[] {
  const offered = choices.some(([value]) => value === chosen)
    ? choices
    : [...choices, [chosen, chosen] as const];
  return offered.map(
    ([value, label]) =>
      html`<option value="${value}"${value === chosen ? html` selected` : ''}>${label}</option>`,
  );
}

const checked = (on: boolean) => (on ? html` checked` : '');

/** The column picker: the organisation's columns, a group a type, each by name and key. */
function columnPicker(groups: readonly ColumnGroup[], picked: ReadonlySet<string>): SafeHtml {
  if (groups.length === 0) {
    return html`<p class="hint" id="hide-columns-hint">${'Your organisation has no data yet: type the keys of columns still to come below.'}</p>`;
  }
  const lists = groups.map(
    (group) => html`<div class="column-group" role="group" aria-label="${group.type} columns">
    <p class="column-type">${group.type}</p>
    ${group.columns.map(
      (column) =>
        html`<label class="check"><input type="checkbox" name="${COLUMN_FIELD}${column.key}" value="on"${checked(picked.has(column.key))}> ${column.name} <code>${column.key}</code></label>`,
    )}
  </div>`,
  );
  return html`<div class="column-picker" id="hide-columns" role="group" aria-labelledby="hide-columns-label" aria-describedby="hide-columns-hint">${lists}</div>
  <p class="hint" id="hide-columns-hint">Ticked columns are left out of every employee the key reads.</p>`;
}

/** What a slice would read today, as the form says it under its fields. */
export type SliceCount = { employees: number; description: string } | { problem: string };

/** A count in words: "Reads 41 employees today", or nobody and what to check. */
export function sliceCountWords(count: SliceCount): string {
  if ('problem' in count) return count.problem;
  if (count.employees === 0) {
    return `Reads nobody today: no employee has ${count.description}. Check the values and their letter case, as your data writes them.`;
  }
  const people = `${count.employees.toLocaleString('en')} employee${count.employees === 1 ? '' : 's'}`;
  return `Reads ${people} today: those where ${count.description}.`;
}

/** The slice's fields: conditions on text columns, a manager's reporting line, the count. */
function sliceFields(choices: KeyChoices, form: KeyForm, count: SliceCount | undefined): SafeHtml {
  const columns =
    choices.textColumns.length === 0
      ? html`Your organisation has no data yet, so no text column to name.`
      : html`Text columns you can name: ${codes(choices.textColumns)}.`;
  const reportsTo =
    choices.managerColumn === null
      ? html`<p class="hint" id="reports-to-note">To give a key one manager's reporting line, an owner first names the column that holds each employee's manager's email: the <a href="${PAGES.roles}#manager-column-title">manager column</a>, under Roles &amp; Permissions.</p>`
      : html`<label for="reports-to" class="sub-label">Reports to</label>
  <input id="reports-to" name="reportsTo" type="email" value="${form.reportsTo}" placeholder="e.g. ana@example.com" aria-describedby="reports-to-hint slice-count" data-slice-field>
  <p class="hint" id="reports-to-hint">A manager's email: the key reads the people whose reporting line (column <code>${choices.managerColumn}</code>) reaches them, at any depth. Empty: no reporting line.</p>`;
  const said = count === undefined ? '' : sliceCountWords(count);
  const problem = count !== undefined && 'problem' in count;
  return html`<div class="field choice-group slice-fields">
  <p class="group-label" id="slice-label">Employees it reads</p>
  <label for="rows" class="sub-label">Rows</label>
  <input id="rows" name="rows" type="text" value="${form.rows}" placeholder="e.g. department in (Engineering, Sales) and country = DE" autocomplete="off" spellcheck="false" aria-describedby="rows-hint rows-columns slice-count" data-slice-field>
  <p class="hint" id="rows-hint">Only the employees that meet these conditions: COLUMN = VALUE, or COLUMN in (VALUE, VALUE), joined by “and”. Values are matched with their letter case, as your data writes them. Empty: every employee.</p>
  <p class="hint column-names" id="rows-columns">${columns}</p>
  ${reportsTo}
  <p class="slice-count${problem ? ' slice-count-problem' : ''}" id="slice-count" role="status" data-count-url="${PAGES.connections}/slice-count">${said}</p>
</div>`;
}

/** The generate form's fields for what the key may read and until when, as `form` has them. */
export function restrictionFields(
  choices: KeyChoices,
  form: KeyForm,
  count?: SliceCount,
): SafeHtml {
  const ticked = new Set(form.cycles);
  const boxes = choices.cycles.map(
    (cycle) =>
      html`<label class="check"><input type="checkbox" name="${CYCLE_FIELD}${cycle.id}" value="on"${checked(ticked.has(cycle.id))}> ${cycle.name}</label>`,
  );
  const options = choiceOptions(EXPIRY_CHOICES, form.expiresIn);
  // A ticked column the organisation no longer has (its cycle removed meanwhile) stays
  // chosen: among the typed keys, where it shows.
  const offered = new Set(choices.columns.flatMap((group) => group.columns.map((c) => c.key)));
  const others = [
    form.otherColumns.trim(),
    ...form.columns.filter((key) => !offered.has(key)),
  ].filter((text) => text.length > 0);
  const types = new Set(form.columnTypes);
  const typeBoxes = COLUMN_TYPES.map(
    (type) =>
      html`<label class="check"><input type="checkbox" name="${COLUMN_TYPE_FIELD}${type}" value="on"${checked(types.has(type))}> ${type}</label>`,
  );
  const some = form.scope === 'some';
  // Groups, not nested fieldsets: the form's one fieldset is what disables it all.
  return html`<div class="field choice-group" role="radiogroup" aria-labelledby="scope-label">
  <p class="group-label" id="scope-label">Merit cycles it reads</p>
  <label class="check"><input type="radio" name="scope" value="all"${checked(!some)} data-clears="#scope-cycles"> Every merit cycle, also those added later</label>
  <label class="check"><input type="radio" name="scope" value="some" id="scope-some"${checked(some)}> Only these:</label>
  <div class="check-list" role="group" aria-label="Merit cycles" id="scope-cycles" data-chooses="scope-some">${boxes}</div>
</div>
${sliceFields(choices, form, count)}
<div class="field choice-group">
  <p class="group-label" id="hide-columns-label">Hidden columns</p>
  ${columnPicker(choices.columns, new Set(form.columns))}
  <label for="other-columns" class="sub-label">Other column keys</label>
  <input id="other-columns" name="otherColumns" type="text" value="${others.join(', ')}" aria-describedby="other-columns-hint">
  <label class="check"><input type="checkbox" name="allowUnknownColumns" value="on"${checked(form.allowUnknownColumns)}> Columns of data still to come</label>
  <p class="hint" id="other-columns-hint">Column keys, separated by commas. Tick “Columns of data still to come” for keys your data does not have yet; otherwise each must be one of your columns.</p>
</div>
<div class="field choice-group" role="group" aria-labelledby="column-types-label">
  <p class="group-label" id="column-types-label">Hide whole types</p>
  <div class="type-list">${typeBoxes}</div>
  <p class="hint">Every column of a ticked type is left out, also columns added later and the parts of composite columns.</p>
</div>
<div class="field">
  <label for="expires-in">Expires</label>
  <select id="expires-in" name="expiresIn">${options}</select>
  <label for="expires-at" class="sub-label">or on a date (UTC)</label>
  <input id="expires-at" name="expiresAt" type="date" value="${form.expiresAt}">
</div>
<div class="field">
  <label for="allow-ips">Allowed addresses</label>
  <textarea id="allow-ips" name="allowIps" rows="2" placeholder="e.g. 203.0.113.0/24, 2001:db8::/32" aria-describedby="allow-ips-hint">${form.allowIps}</textarea>
  <p class="hint" id="allow-ips-hint">IPv4 or IPv6 addresses or CIDR ranges (such as 10.20.0.0/24), separated by commas or new lines: requests with the key from any other address are refused. Empty: any address.</p>
</div>`;
}

/** What a key just generated or rolled reads, as the new-key box repeats it. */
export interface NewKeyReads {
  cycles: string[] | null;
  hiddenColumns: string[];
  hiddenColumnTypes: string[];
  expiresAt: string | null;
  allowedAddresses: string[] | null;
  /** The key's slice and how many employees it read when made; null: every employee. */
  rowSlice?: { description: string; employees: number } | null;
}

const codes = (items: readonly string[]) =>
  items.map((item, index) => html`${index > 0 ? ', ' : ''}<code>${item}</code>`);

/** The new-key box's account of what the key reads, until when and from where. */
export function newKeyFacts(reads: NewKeyReads, cycleNames: ReadonlyMap<string, string>): SafeHtml {
  const facts: [string, SafeHtml][] = [
    [
      'Merit cycles',
      reads.cycles === null
        ? html`Every merit cycle, also those added later`
        : html`${reads.cycles.map((id, index) => html`${index > 0 ? ', ' : ''}${cycleNames.get(id) ?? id}`)}`,
    ],
    [
      'Hidden columns',
      reads.hiddenColumns.length === 0 ? html`None` : html`${codes(reads.hiddenColumns)}`,
    ],
    [
      'Hidden types',
      reads.hiddenColumnTypes.length === 0 ? html`None` : html`${codes(reads.hiddenColumnTypes)}`,
    ],
    ['Employees', reads.rowSlice ? html`${sliceCountWords(reads.rowSlice)}` : html`Every employee`],
    ['Expires', reads.expiresAt === null ? html`Never` : shortTime(reads.expiresAt)],
    [
      'Allowed addresses',
      reads.allowedAddresses === null ? html`Any address` : html`${codes(reads.allowedAddresses)}`,
    ],
  ];
  return html`<dl class="new-key-facts" aria-label="What the new key reads">${facts.map(
    // A slice's sentence is long: it takes the whole row, not one narrow column.
    ([term, detail]) =>
      html`<div${term === 'Employees' ? html` class="fact-wide"` : ''}><dt>${term}</dt><dd>${detail}</dd></div>`,
  )}</dl>`;
}

/**
 * The list's cells for what a key may read (its merit cycles, with the hidden columns and
 * the addresses it may be used from under them) and for its status (with its expiry under
 * it): two columns where there were six, so that the table fits a desktop window
 * (docs/web-app.md, "Connections").
 */
export function restrictionCells(
  key: ApiKey,
  cycleNames: ReadonlyMap<string, string>,
  now: number,
): { reads: SafeHtml; status: SafeHtml } {
  const scope =
    key.cycles === null
      ? html`All merit cycles`
      : key.cycles.map((id, index) => html`${index > 0 ? ', ' : ''}${cycleNames.get(id) ?? id}`);
  const hidden =
    key.hiddenColumns.length === 0
      ? html`No hidden columns`
      : html`Hides ${key.hiddenColumns.map(
          (column, index) => html`${index > 0 ? ', ' : ''}<code>${column}</code>`,
        )}`;
  const expiresAt = key.expiresAt === null ? null : Date.parse(key.expiresAt);
  const expired = expiresAt !== null && expiresAt <= now;
  const soon =
    key.revokedAt === null && expiresAt !== null && !expired && expiresAt - now <= EXPIRING_SOON_MS;
  const expiry =
    key.expiresAt === null
      ? html`Never expires`
      : html`${expired ? 'Expired' : 'Expires'} ${shortTime(key.expiresAt)}${soon ? html` <span class="badge badge-soon">Expires soon</span>` : ''}`;
  const allowed =
    key.allowedAddresses === null
      ? html`From any address`
      : html`Only from ${key.allowedAddresses.map(
          (range, index) => html`${index > 0 ? ', ' : ''}<code>${range}</code>`,
        )}`;
  // A revoked key's expiry no longer matters: when it was revoked does.
  const status =
    key.revokedAt !== null
      ? html`<span class="badge badge-revoked">Revoked</span> <span class="sub">${shortTime(key.revokedAt)}</span>`
      : html`<span class="badge ${expired ? 'badge-revoked' : 'badge-active'}">${expired ? 'Expired' : 'Active'}</span> <span class="sub">${expiry}</span>`;
  // data-label: the column's name, which a narrow screen shows beside each cell.
  const rows =
    key.rowSlice === null
      ? ''
      : html` <span class="sub key-slice">Only where <code>${key.rowSlice.description}</code></span>`;
  return {
    reads: html`<td data-label="Reads"><div>${scope}${rows} <span class="sub">${hidden}</span> <span class="sub">${allowed}</span></div></td>`,
    status: html`<td data-label="Status"><div>${status}</div></td>`,
  };
}

/** Where a key was last used from, under the time (nothing for a key never used). */
export function lastUsedFrom(key: ApiKey): SafeHtml | '' {
  return key.lastUsedAddress === null
    ? ''
    : html`<span class="sub">from <code>${key.lastUsedAddress}</code></span>`;
}

function shortTime(iso: string): SafeHtml {
  return html`<time datetime="${iso}" title="${iso}">${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC</time>`;
}

/**
 * The Roll page: a new secret for the key, the old one valid for a grace period (`grace`:
 * the one chosen, when a refused roll shows the page again).
 */
export function rollForm(key: ApiKey, csrf: SafeHtml, grace: string = DEFAULT_GRACE): SafeHtml {
  const options = choiceOptions(GRACE_CHOICES, grace);
  return html`<section class="panel" aria-labelledby="roll-title">
  <h2 id="roll-title">Roll “${key.name}”</h2>
  <p>A new secret for this key: the same name, merit cycles, hidden columns, expiry and allowed addresses. The new secret is shown once. Applications using the old secret keep working for the grace period, then get 401.</p>
  <form method="post" action="${PAGES.connections}/keys/${key.id}/roll">
    ${csrf}
    <div class="field">
      <label for="grace">Old secret keeps working for</label>
      <select id="grace" name="grace">${options}</select>
    </div>
    <div class="button-row">
      <button type="submit" class="button button-primary">Roll key</button>
      <a class="button button-quiet" href="${PAGES.connections}">Cancel</a>
    </div>
  </form>
</section>`;
}

/** Where the old secret of a just-rolled key stands. */
export function rolledNotice(name: string, until: string): SafeHtml {
  return html`Rolled “${name}”: the old secret keeps working until ${shortTime(until)}, then gets 401.`;
}
