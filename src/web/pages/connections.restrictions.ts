// Settings → Connections: what a key may read and until when (docs/api-keys.md, "Least
// privilege"), the web form of `compplan keys create --cycles --hide-columns --expires-*`
// and `keys roll`. The same service checks both; its one-line messages name the CLI's
// options, which the form shows under its own labels.
import type { FastifyRequest } from 'fastify';
import { KeyManagementError } from '../../api-keys/errors.js';
import type { ApiKey } from '../../api-keys/repository.js';
import { EXPIRING_SOON_MS, parseList } from '../../api-keys/restrictions.js';
import type { NewKeyInput } from '../../api-keys/service.js';
import type { Db } from '../../db/connect.js';
import { html, type SafeHtml } from '../html.js';
import { formField } from '../http.js';
import { PAGES } from '../paths.js';

/** What the generate form offers: the organisation's cycles and column keys in its data. */
export interface KeyChoices {
  cycles: { id: string; name: string }[];
  columnKeys: string[];
}

// Column keys are read from this many employees of the organisation (a page view must
// not read a million rows); keys that appear only in others can still be typed.
const COLUMN_KEY_SAMPLE = 1_000;

export async function keyChoices(db: Db, organizationId: string): Promise<KeyChoices> {
  const cycles = await db
    .selectFrom('merit_cycles')
    .select(['id', 'name'])
    .where('organization_id', '=', organizationId)
    .orderBy('created_date', 'desc')
    .orderBy('id')
    .execute();
  const sample = await db
    .selectFrom('merit_cycle_employees')
    .select('body')
    .where('organization_id', '=', organizationId)
    .limit(COLUMN_KEY_SAMPLE)
    .execute();
  const keys = new Set<string>();
  for (const { body } of sample) {
    for (const key of Object.keys((JSON.parse(body) as { columns: object }).columns)) {
      keys.add(key);
    }
  }
  return { cycles, columnKeys: [...keys].sort() };
}

// One field name per cycle checkbox: the form parser keeps one value per name.
const CYCLE_FIELD = 'cycle:';

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

/**
 * The restrictions a generate form asks for, as the key service takes them. Cycles ticked
 * under "every merit cycle" are refused, never ignored: whoever ticked them believes the
 * key restricted, and a key must never read more than its maker meant.
 */
export function restrictionsOf(request: FastifyRequest): Omit<NewKeyInput, 'org' | 'name'> {
  const body = (request.body ?? {}) as Record<string, unknown>;
  const scope = formField(request, 'scope');
  const cycles = Object.keys(body)
    .filter((name) => name.startsWith(CYCLE_FIELD) && body[name] === 'on')
    .map((name) => name.slice(CYCLE_FIELD.length));
  if (scope !== 'some' && cycles.length > 0) throw new KeyManagementError(CONTRADICTORY_SCOPE);
  const hidden = formField(request, 'hideColumns').trim();
  const expiresIn = formField(request, 'expiresIn');
  const expiresAt = formField(request, 'expiresAt').trim();
  const allowIps = formField(request, 'allowIps').trim();
  return {
    cycles: scope === 'some' ? cycles : undefined,
    allowedAddresses: allowIps === '' ? undefined : parseList(allowIps, '--allow-ips'),
    hiddenColumns: hidden === '' ? undefined : parseList(hidden, '--hide-columns'),
    expiresIn: expiresIn === '' ? undefined : expiresIn,
    expiresAt: expiresAt === '' ? undefined : expiresAt,
  };
}

const FIELD_LABELS: [RegExp, string][] = [
  [/--cycles/g, 'Merit cycles'],
  [/--hide-columns/g, 'Hidden columns'],
  [/--expires-in/g, 'Expires'],
  [/--expires-at/g, 'Expiry date'],
  [/--grace/g, 'Grace period'],
  [/--allow-ips/g, 'Allowed addresses'],
  [/ \(leave it out for every cycle\)/g, ' (or choose every merit cycle)'],
];

/** A key service message in the form's words. */
export function formMessage(message: string): string {
  return FIELD_LABELS.reduce((text, [option, label]) => text.replace(option, label), message);
}

/** The generate form's fields for what the key may read and until when. */
export function restrictionFields(choices: KeyChoices): SafeHtml {
  const boxes = choices.cycles.map(
    (cycle) =>
      html`<label class="check"><input type="checkbox" name="${CYCLE_FIELD}${cycle.id}" value="on"> ${cycle.name}</label>`,
  );
  const options = EXPIRY_CHOICES.map(
    ([value, label]) => html`<option value="${value}">${label}</option>`,
  );
  const seen = choices.columnKeys.map((key) => html`<code>${key}</code> `);
  // A group, not a nested fieldset: the form's one fieldset is what disables it all.
  return html`<div class="field choice-group" role="radiogroup" aria-labelledby="scope-label">
  <p class="group-label" id="scope-label">Merit cycles it reads</p>
  <label class="check"><input type="radio" name="scope" value="all" checked data-clears="#scope-cycles"> Every merit cycle, also those added later</label>
  <label class="check"><input type="radio" name="scope" value="some" id="scope-some"> Only these:</label>
  <div class="check-list" role="group" aria-label="Merit cycles" id="scope-cycles" data-chooses="scope-some">${boxes}</div>
</div>
<div class="field">
  <label for="hide-columns">Hidden columns</label>
  <input id="hide-columns" name="hideColumns" type="text" placeholder="e.g. salary, bonus" aria-describedby="hide-columns-hint">
  <p class="hint" id="hide-columns-hint">Column keys, separated by commas, left out of every employee the key reads.${choices.columnKeys.length > 0 ? html` Keys in your data: ${seen}` : ''}</p>
</div>
<div class="field">
  <label for="expires-in">Expires</label>
  <select id="expires-in" name="expiresIn">${options}</select>
  <label for="expires-at" class="sub-label">or on a date (UTC)</label>
  <input id="expires-at" name="expiresAt" type="date">
</div>
<div class="field">
  <label for="allow-ips">Allowed addresses</label>
  <input id="allow-ips" name="allowIps" type="text" placeholder="e.g. 203.0.113.0/24, 2001:db8::/32" aria-describedby="allow-ips-hint">
  <p class="hint" id="allow-ips-hint">IPv4 or IPv6 addresses or CIDR ranges, separated by commas: requests with the key from any other address are refused. Empty: any address.</p>
</div>`;
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
  return {
    reads: html`<td data-label="Reads"><div>${scope} <span class="sub">${hidden}</span> <span class="sub">${allowed}</span></div></td>`,
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

/** The Roll page: a new secret for the key, the old one valid for a grace period. */
export function rollForm(key: ApiKey, csrf: SafeHtml): SafeHtml {
  const options = GRACE_CHOICES.map(
    ([value, label]) =>
      html`<option value="${value}"${value === '24h' ? html` selected` : ''}>${label}</option>`,
  );
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
