// Settings → Data's page: the cycles with their Excel and CSV templates, the form that creates a
// merit cycle, the upload form (its choices kept after a check or a refusal), a check's
// outcome with the Import form, a spreadsheet's problems grouped, and an import's summary
// (pages/data.ts).

import { CSV_MAX_BYTES } from '../../import/csv.js';
import type { CycleOverview } from '../../import/cycle-imports.js';
import { inMiB } from '../../import/errors.js';
import type { ImportSummary } from '../../import/load.js';
import { type ProblemGroup, whereWords } from '../../import/sheet-problems.js';
import {
  AMOUNT_WRITINGS,
  type AmountWriting,
  DATE_WRITINGS,
  type DateWriting,
  ENCODINGS,
  type Encoding,
  type ReadingChoices,
  readingChoices,
} from '../../import/sheet-reading.js';
import { JSON_MAX_BYTES } from '../../import/source.js';
import {
  type StagedUpload,
  UPLOAD_MAX_BYTES,
  type UploadFormat,
  type UploadProgress,
} from '../../import/uploads.js';
import type { Signed } from '../context.js';
import { html, type SafeHtml } from '../html.js';
import {
  alert,
  listTable,
  RESENT_NOTICE,
  sessionFormFields,
  settingsLayout,
  time,
} from '../layout.js';
import { PAGES } from '../paths.js';

const DATA_PAGE = PAGES.data;

const STATUS_NAMES: Record<string, string> = {
  active: 'Active',
  inactive: 'Inactive',
  finalized: 'Finalized',
};

/** What the page shows once after the post that imported a file (POST/redirect/GET). */
export interface ImportedView {
  kind: 'imported';
  name: string;
  summary: ImportSummary;
}

/** What the page shows once after the post that created a merit cycle. */
export interface CycleCreatedView {
  kind: 'cycle-created';
  id: string;
  name: string;
}

/** The upload form's choices, shown again as they were after a check or a refusal. */
export interface UploadChoices {
  format?: UploadFormat | undefined;
  cycleId?: string | undefined;
  reading?: Partial<ReadingChoices> | undefined;
}

/** A spreadsheet refused: its problems grouped, what it was read as, how many in all. */
export interface SheetRefusal extends ProblemCount {
  groups: readonly ProblemGroup[];
  readAs: readonly string[];
}

/** How many problems a refused file has, and how many of them its problems.csv lists. */
export interface ProblemCount {
  total: number;
  listed: number;
}

/** The new-cycle form as it was sent, and what is wrong with each field. */
export interface NewCycleForm {
  values: Record<NewCycleField, string>;
  errors: Partial<Record<NewCycleField, string>>;
}

export type NewCycleField = 'name' | 'startDate' | 'endDate' | 'status' | 'currency';

export interface DataPageView extends Signed {
  cycles: CycleOverview[];
  choices?: UploadChoices | undefined;
  sheet?: SheetRefusal | undefined;
  /** The Import form's "also remove" box, as it was sent. */
  prune?: boolean | undefined;
  newCycle?: NewCycleForm | undefined;
  cycleCreated?: CycleCreatedView | undefined;
  checked?: StagedUpload | undefined;
  /** The page was asked for a check that has expired or was imported. */
  checkGone?: boolean;
  /** … and it was made by another instance, or before this one restarted. */
  checkElsewhere?: boolean;
  running?: UploadProgress | undefined;
  imported?: ImportedView | undefined;
  resent?: boolean;
  error?: string | undefined;
  /** A refused data set's first problems, in words; how many there are. */
  problems?: string[] | undefined;
  problemCount?: ProblemCount | undefined;
}

const count = (n: number) => n.toLocaleString('en');

export const tooLargeMessage = () =>
  `The file is larger than ${inMiB(UPLOAD_MAX_BYTES)}, the most the web application takes; nothing was changed. Split the data set, or ask whoever runs compplan to load it with compplan import.`;

const PHASES: Record<UploadProgress['phase'], string> = {
  receiving: 'uploading a file',
  checking: 'checking a file',
  importing: 'importing a file',
};

/**
 * A check's file stays on the server that checked it (docs/web-app.md, "Several
 * instances"): said when another server is asked for it.
 */
export const checkElsewhereMessage =
  'That check was made by another compplan server than the one that answered now (compplan runs on several servers here, or this one has restarted since), and the checked file is kept only there. Check the file again, then import it. If this happens every time, tell whoever runs compplan: the Data page needs each signed-in session to reach the same server.';

export function busyMessage(signed: Signed, running: UploadProgress): string {
  return `Another upload for ${signed.organization.name} is running: ${running.by} is ${PHASES[running.phase]} (since ${running.startedAt.slice(11, 16)} UTC). Wait until it has finished, then upload again; nothing was changed.`;
}

function lastImport(cycle: CycleOverview): SafeHtml {
  const last = cycle.lastImport;
  if (!last) return html`<span class="muted">Before records were kept</span>`;
  const by = last.by === 'cli' ? 'the command line' : last.by;
  const counts = last.employees
    ? html`<span class="sub">${count(last.employees.created)} created, ${count(last.employees.updated)} updated, ${count(last.employees.unchanged)} unchanged, ${count(last.employees.removed)} removed</span>`
    : html`<span class="sub">The cycle only, not its employees</span>`;
  return html`<div>${time(last.at)} <span class="sub">by ${by}</span> ${counts}</div>`;
}

function cyclesTable(cycles: CycleOverview[]): SafeHtml {
  if (cycles.length === 0) return html`<p class="muted">No merit cycles yet.</p>`;
  const rows = cycles.map(
    (cycle) => html`<tr>
  <th scope="row">${cycle.name} <span class="sub"><code>${cycle.id}</code></span></th>
  <td data-label="Status">${STATUS_NAMES[cycle.status] ?? cycle.status}</td>
  <td data-label="Employees" class="number">${count(cycle.employeeCount)}</td>
  <td data-label="Last import">${lastImport(cycle)}</td>
  <td data-label="Templates"><span class="template-links">${templateLinks(cycle.id, cycle.name)}</span></td>
</tr>`,
  );
  return listTable({
    className: 'cycle-list',
    columns: [
      'Merit cycle',
      'Status',
      { label: 'Employees', className: 'number' },
      'Last import',
      'Templates',
    ],
    rows,
  });
}

/** A cycle's template, the header its spreadsheet import reads and one example row. */
export const templatePath = (cycleId: string, kind: 'csv' | 'xlsx' = 'csv') =>
  `${DATA_PAGE}/cycles/${encodeURIComponent(cycleId)}/template.${kind}`;

/** The links to a cycle's two templates, each named for a screen reader with its cycle. */
function templateLinks(cycleId: string, cycleName: string): SafeHtml {
  return html`<a href="${templatePath(cycleId, 'xlsx')}" download>Excel template<span class="visually-hidden"> of ${cycleName}</span></a> <a href="${templatePath(cycleId)}" download>CSV template<span class="visually-hidden"> of ${cycleName}</span></a>`;
}

function newCycleForm(view: DataPageView): SafeHtml {
  const form = view.newCycle;
  const value = (field: NewCycleField) => form?.values[field] ?? '';
  const status = form?.values.status || 'active';
  const field = (name: NewCycleField, label: string, input: SafeHtml, hint?: string): SafeHtml => {
    const error = form?.errors[name];
    return html`<div class="field${error ? ' field-invalid' : ''}">
      <label for="cycle-${name}">${label}</label>
      ${input}
      ${hint && html`<p class="hint" id="cycle-${name}-hint">${hint}</p>`}
      ${error && html`<p class="field-error" id="cycle-${name}-error">${error}</p>`}
    </div>`;
  };
  const aria = (name: NewCycleField, hint: boolean) => {
    const ids = [hint ? `cycle-${name}-hint` : '', form?.errors[name] ? `cycle-${name}-error` : '']
      .filter(Boolean)
      .join(' ');
    return html`${ids ? html` aria-describedby="${ids}"` : ''}${form?.errors[name] ? html` aria-invalid="true"` : ''}`;
  };
  return html`<section class="panel" aria-labelledby="new-cycle-title">
  <h2 id="new-cycle-title">New merit cycle</h2>
  <p>Create a merit cycle here, then load its employees from a spreadsheet: download its Excel or CSV template from the list above, fill it in, and upload it below.</p>
  <form method="post" action="${DATA_PAGE}/cycles" class="stack new-cycle-form" novalidate>
    ${sessionFormFields(view.csrfToken)}
    ${field('name', 'Name', html`<input id="cycle-name" name="name" type="text" maxlength="200" required value="${value('name')}"${aria('name', false)}>`)}
    <div class="field-row">
      ${field('startDate', 'Start date', html`<input id="cycle-startDate" name="startDate" type="date" required value="${value('startDate')}"${aria('startDate', false)}>`)}
      ${field('endDate', 'End date', html`<input id="cycle-endDate" name="endDate" type="date" required value="${value('endDate')}"${aria('endDate', false)}>`)}
    </div>
    ${field(
      'status',
      'Status',
      html`<select id="cycle-status" name="status"${aria('status', false)}>${Object.entries(
        STATUS_NAMES,
      ).map(
        ([key, name]) =>
          html`<option value="${key}"${key === status ? html` selected` : ''}>${name}</option>`,
      )}</select>`,
    )}
    ${field(
      'currency',
      'Currency',
      html`<input id="cycle-currency" name="currency" type="text" maxlength="3" required autocomplete="off" spellcheck="false" class="short" value="${value('currency')}"${aria('currency', true)}>`,
      'The three-letter code of the cycle’s currency, such as USD, EUR or GBP. Amounts in its spreadsheet are in this currency.',
    )}
    <button type="submit" class="button button-primary">Create merit cycle</button>
  </form>
</section>`;
}

// Filled in by the page's script while the form waits for its answer (static/app.js).
const progressBox = html`<div class="upload-progress" hidden>
      <progress max="100"></progress>
      <p class="hint" role="status" aria-live="polite"></p>
    </div>`;

const DATE_LABELS: Record<DateWriting, string> = {
  'YYYY-MM-DD': '2025-03-15 (year-month-day)',
  'MM/DD/YYYY': '03/15/2025 (month/day/year)',
  'DD/MM/YYYY': '15/03/2025 (day/month/year)',
};
const AMOUNT_LABELS: Record<AmountWriting, string> = {
  '1234.56': '85000.00',
  '1,234.56': '85,000.00 (comma between thousands)',
  '1.234,56': '85.000,00 (decimal comma)',
};
const ENCODING_LABELS: Record<Encoding, string> = {
  'utf-8': 'UTF-8 (“CSV UTF-8”, most spreadsheets)',
  'windows-1252': 'Windows-1252 (older Excel on Windows)',
};

/** The options of a select, the chosen one selected. */
const options = <T extends string>(
  values: readonly T[],
  labels: Record<T, string>,
  chosen: T,
): SafeHtml[] =>
  values.map(
    (value) =>
      html`<option value="${value}"${value === chosen ? html` selected` : ''}>${labels[value]}</option>`,
  );

/** The choices of how a CSV file is written (sheet-reading.ts): what would be guessed. */
function readingFields(reading: ReadingChoices): SafeHtml {
  return html`<fieldset class="field csv-only">
      <legend>How the CSV file is written</legend>
      <p class="hint">The separator (, ; or tab), TRUE/FALSE or Yes/No and a byte order mark are read as they are; these would have to be guessed, so you choose them.</p>
      <div class="field">
        <label for="upload-dates">Dates</label>
        <select id="upload-dates" name="dates">${options(DATE_WRITINGS, DATE_LABELS, reading.dates)}</select>
      </div>
      <div class="field">
        <label for="upload-amounts">Amounts and numbers</label>
        <select id="upload-amounts" name="amounts">${options(AMOUNT_WRITINGS, AMOUNT_LABELS, reading.amounts)}</select>
      </div>
      <div class="field">
        <label for="upload-encoding">Encoding</label>
        <select id="upload-encoding" name="encoding">${options(ENCODINGS, ENCODING_LABELS, reading.encoding)}</select>
      </div>
      <div class="switch-row">
        <input id="upload-ignore-unknown" name="ignoreUnknownColumns" type="checkbox" value="on"${reading.ignoreUnknownColumns ? html` checked` : ''} aria-describedby="upload-ignore-unknown-hint">
        <div>
          <label for="upload-ignore-unknown">Ignore columns the import does not know</label>
          <p class="hint" id="upload-ignore-unknown-hint">Without this, a column the format does not have is a problem the check lists.</p>
        </div>
      </div>
    </fieldset>`;
}

/** The form's choices: as sent, else the checked file's, else the defaults. */
function choicesOf(view: DataPageView): UploadChoices {
  if (view.choices) return view.choices;
  const checked = view.checked;
  if (checked)
    return { format: checked.format, cycleId: checked.cycleId, reading: checked.reading };
  if (view.cycleCreated) return { format: 'csv', cycleId: view.cycleCreated.id };
  return {};
}

function uploadForm(view: DataPageView): SafeHtml {
  const choices = choicesOf(view);
  const format = choices.format ?? 'data-set';
  const cycles = view.cycles.map(
    (cycle) =>
      html`<option value="${cycle.id}"${cycle.id === choices.cycleId ? html` selected` : ''}>${cycle.name} (${cycle.id})</option>`,
  );
  const radio = (value: UploadFormat) =>
    html`type="radio" id="format-${value}" name="format" value="${value}"${value === format ? html` checked` : ''}`;
  return html`<section class="panel" aria-labelledby="upload-title">
  <h2 id="upload-title">Upload a file</h2>
  <p>First the file is checked: nothing changes until you import it. The import is the one <code>compplan import</code> runs, with the same rules, limits and messages.</p>
  <form method="post" action="${DATA_PAGE}/check" enctype="multipart/form-data" class="stack upload-form" data-upload-progress="${DATA_PAGE}/progress">
    ${sessionFormFields(view.csrfToken)}
    <fieldset class="field">
      <legend>What the file holds</legend>
      <div class="radio-row"><input ${radio('data-set')}> <label for="format-data-set">A data set: the organisation and its merit cycles, as JSON or NDJSON (.json, .ndjson)</label></div>
      <div class="radio-row"><input ${radio('csv')}> <label for="format-csv">One merit cycle's employees, as CSV or an Excel workbook (.csv, .xlsx)</label></div>
    </fieldset>
    <div class="field">
      <label for="upload-cycle">Merit cycle (for a CSV file or an Excel workbook)</label>
      <select id="upload-cycle" name="cycle"${view.cycles.length === 0 ? html` disabled` : ''}>${cycles}</select>
    </div>
    ${readingFields(readingChoices(choices.reading))}
    <div class="field csv-only">
      <label for="upload-sheet">Sheet (for an Excel workbook; empty: the first visible sheet)</label>
      <input id="upload-sheet" name="sheet" type="text" maxlength="200">
    </div>
    <div class="field">
      <label for="upload-file">File</label>
      <input id="upload-file" name="file" type="file" required accept=".csv,.xlsx,.json,.ndjson,.jsonl,text/csv,application/json,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" aria-describedby="upload-limits">
      <p class="hint" id="upload-limits">Up to ${inMiB(UPLOAD_MAX_BYTES)}: NDJSON of any size within it; a JSON file up to ${inMiB(JSON_MAX_BYTES)}, a CSV file up to ${inMiB(CSV_MAX_BYTES)}, an Excel workbook's sheet up to ${inMiB(CSV_MAX_BYTES)} of text (they are read whole). Choose the file again after a check: browsers do not keep it.</p>
    </div>
    <button type="submit" class="button button-primary">Check file</button>
    ${progressBox}
  </form>
</section>`;
}

function checkedPanel(view: DataPageView, upload: StagedUpload): SafeHtml {
  const { summary, cycles } = upload.checked;
  const removed = summary.employees.removed;
  const rows = cycles.map(
    (cycle) => html`<tr>
  <th scope="row">${cycle.name}</th>
  <td data-label="Merit cycle">${cycle.cycle === 'created' ? 'New' : cycle.cycle === 'updated' ? 'Updated' : 'Unchanged'}</td>
  <td data-label="Created" class="number">${cycle.employees ? count(cycle.employees.created) : '—'}</td>
  <td data-label="Updated" class="number">${cycle.employees ? count(cycle.employees.updated) : '—'}</td>
  <td data-label="Unchanged" class="number">${cycle.employees ? count(cycle.employees.unchanged) : '—'}</td>
  <td data-label="Removed if ticked below" class="number">${cycle.employees ? count(cycle.employees.removed) : '—'}</td>
</tr>`,
  );
  const organization = summary.organization.created
    ? html`<p>The import creates the organisation.</p>`
    : summary.organization.changed.length > 0
      ? html`<p>The import changes the organisation's ${summary.organization.changed.join(' and ')}.</p>`
      : '';
  return html`<section class="panel" aria-labelledby="checked-title">
  <h2 id="checked-title">Checked: ${upload.name}</h2>
  <p>The file has no problems. Nothing has changed yet; importing it does this to the employees of each merit cycle:</p>
  ${upload.readAs && html`<p class="hint read-as">Read as: ${upload.readAs.join(', ')}.</p>`}
  ${organization}
  <div class="table-wrap"><table class="change-list stacked">
    <thead><tr><th scope="col">Merit cycle</th><th scope="col">Cycle</th><th scope="col" class="number">Created</th><th scope="col" class="number">Updated</th><th scope="col" class="number">Unchanged</th><th scope="col" class="number">Removed if ticked below</th></tr></thead>
    <tbody>
${rows}
    </tbody>
  </table></div>
  <form method="post" action="${DATA_PAGE}/import" class="stack" data-upload-progress="${DATA_PAGE}/progress">
    ${sessionFormFields(view.csrfToken)}
    <input type="hidden" name="token" value="${upload.token}">
    ${
      removed > 0
        ? html`<div class="switch-row">
      <input id="prune" name="prune" type="checkbox" value="on"${upload.pruneRequired || view.prune ? html` checked` : ''}${upload.pruneRequired ? html` required` : ''} aria-describedby="prune-hint">
      <div>
        <label for="prune">Also remove the ${count(removed)} employee${removed === 1 ? '' : 's'} the file no longer lists</label>
        <p class="hint" id="prune-hint">${upload.pruneRequired ? html`Without this the import is refused: ${upload.pruneRequired}` : 'Without this they are kept as they are.'}</p>
      </div>
    </div>`
        : html`<p class="hint">The file lists every stored employee of its merit cycles: nothing would be removed.</p>`
    }
    <p class="hint">Import applies exactly this check. If the data changes first (another import, a merit cycle removed), it is refused and nothing changes: check the file again.</p>
    <div class="button-row">
      <button type="submit" class="button button-primary">Import</button>
      <a class="button button-quiet" href="${DATA_PAGE}">Cancel</a>
    </div>
    ${progressBox}
  </form>
</section>`;
}

function importedNotice(imported: ImportedView): SafeHtml {
  const { meritCycles: c, employees: e } = imported.summary;
  return alert(
    'success',
    html`Imported ${imported.name}: merit cycles ${count(c.created)} created, ${count(c.updated)} updated, ${count(c.unchanged)} unchanged; employees ${count(e.created)} created, ${count(e.updated)} updated, ${count(e.unchanged)} unchanged, ${count(e.removed)} removed.`,
  );
}

export const PROBLEMS_CSV = `${DATA_PAGE}/problems.csv`;

/** The link to a refused file's whole list: every problem, or the first of too many. */
function downloadLink({ total, listed }: ProblemCount): SafeHtml {
  return listed < total
    ? html`<a href="${PROBLEMS_CSV}" download>Download the first ${count(listed)} problems (CSV)</a>`
    : html`<a href="${PROBLEMS_CSV}" download>Download every problem (CSV)</a>`;
}

function problemList(view: DataPageView): SafeHtml {
  if (view.sheet) return sheetProblems(view.sheet);
  const problems = view.problems ?? [];
  if (problems.length === 0) return html``;
  const counted = view.problemCount;
  const more = counted ? counted.total - problems.length : 0;
  return html`<section class="panel panel-danger" aria-labelledby="problems-title">
  <h2 id="problems-title">Problems</h2>
  ${counted && html`<p>${downloadLink(counted)}: each problem with its line, record and field, to work through in a spreadsheet.</p>`}
  <ol class="problems">${problems.map((problem) => html`<li>${problem}</li>`)}</ol>
  ${counted && more > 0 && html`<p class="hint problems-more">And ${count(more)} more problem${more === 1 ? '' : 's'}: ${downloadLink(counted)} to see ${counted.listed < counted.total ? 'more of them' : 'every one'}.</p>`}
</section>`;
}

const times = (n: number) => (n === 1 ? 'once' : `${count(n)} times`);

/** A spreadsheet's problems, grouped: each with its count, column, first rows, what to do. */
function sheetProblems(sheet: SheetRefusal): SafeHtml {
  const download = downloadLink(sheet);
  const groups = sheet.groups.map((group, index) => {
    const more = group.count - group.examples.length;
    const examples = group.examples
      .map((example) => whereWords(example, group.column))
      .filter((where) => where !== '');
    return html`<li class="problem-group" aria-labelledby="problem-${index}">
    <h3 id="problem-${index}">${group.column !== undefined ? html`<span class="problem-column">${group.column}</span>: ` : ''}${group.problem} <span class="problem-count">(${times(group.count)})</span></h3>
    <p>${group.remedy} <a href="${group.help}">More about this problem<span class="visually-hidden">: ${group.problem}</span></a></p>
    ${examples.length > 0 && html`<ul class="problem-examples">${examples.map((where) => html`<li>${where}</li>`)}</ul>`}
    ${more > 0 && html`<p class="hint">And ${count(more)} more like ${more === 1 ? 'it' : 'them'}: ${download} to see every row.</p>`}
  </li>`;
  });
  return html`<section class="panel panel-danger" aria-labelledby="problems-title">
  <h2 id="problems-title">Problems</h2>
  <p class="read-as">Read as: ${sheet.readAs.join(', ')}.</p>
  <p>${download}: ${sheet.listed < sheet.total ? 'each' : 'every'} problem with its row, column and value, to fix the file in your spreadsheet.</p>
  <ol class="problem-groups">${groups}</ol>
</section>`;
}

function cycleCreatedNotice(created: CycleCreatedView): SafeHtml {
  return alert(
    'success',
    html`Merit cycle ${created.name} created. Load its employees: download its <a href="${templatePath(created.id, 'xlsx')}" download>Excel template</a> or <a href="${templatePath(created.id)}" download>CSV template</a>, fill it in, and upload it below (it is chosen already).`,
  );
}

export function dataPage(view: DataPageView): string {
  return settingsLayout(
    view,
    'data',
    'Data',
    html`<p class="lead">The merit cycles and employees the API serves for ${view.organization.name}, and loading new data.</p>
${view.error && alert('error', view.error)}
${view.resent && alert('info', RESENT_NOTICE)}
${view.checkGone && alert('info', view.checkElsewhere ? checkElsewhereMessage : 'That check has expired or its file was imported already. Upload the file again.')}
${view.imported && importedNotice(view.imported)}
${view.cycleCreated && cycleCreatedNotice(view.cycleCreated)}
${view.running && !view.error && alert('info', busyMessage(view, view.running))}
${problemList(view)}
${view.checked && checkedPanel(view, view.checked)}
<section class="panel" aria-labelledby="cycles-title">
  <h2 id="cycles-title">Merit cycles</h2>
  ${cyclesTable(view.cycles)}
</section>
${uploadForm(view)}
${newCycleForm(view)}`,
  );
}
