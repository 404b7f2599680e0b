// Settings → Data's page: the cycles, the upload form, a check's outcome with the Import
// form, and an import's summary (pages/data.ts).

import { CSV_MAX_BYTES } from '../../import/csv.js';
import type { CycleOverview } from '../../import/cycle-imports.js';
import { inMiB } from '../../import/errors.js';
import type { ImportSummary } from '../../import/load.js';
import { JSON_MAX_BYTES } from '../../import/source.js';
import { type StagedUpload, UPLOAD_MAX_BYTES, type UploadProgress } from '../../import/uploads.js';
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

export interface DataPageView extends Signed {
  cycles: CycleOverview[];
  checked?: StagedUpload | undefined;
  /** The page was asked for a check that has expired or was imported. */
  checkGone?: boolean;
  running?: UploadProgress | undefined;
  imported?: ImportedView | undefined;
  resent?: boolean;
  error?: string | undefined;
  problems?: string[] | undefined;
}

const count = (n: number) => n.toLocaleString('en');

export const tooLargeMessage = () =>
  `The file is larger than ${inMiB(UPLOAD_MAX_BYTES)}, the most the web application takes; nothing was changed. Split the data set, or ask whoever runs compplan to load it with compplan import.`;

const PHASES: Record<UploadProgress['phase'], string> = {
  receiving: 'uploading a file',
  checking: 'checking a file',
  importing: 'importing a file',
};

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
</tr>`,
  );
  return listTable({
    className: 'cycle-list',
    columns: ['Merit cycle', 'Status', { label: 'Employees', className: 'number' }, 'Last import'],
    rows,
  });
}

// Filled in by the page's script while the form waits for its answer (static/app.js).
const progressBox = html`<div class="upload-progress" hidden>
      <progress max="100"></progress>
      <p class="hint" role="status" aria-live="polite"></p>
    </div>`;

function uploadForm(view: DataPageView): SafeHtml {
  const cycles = view.cycles.map(
    (cycle) => html`<option value="${cycle.id}">${cycle.name} (${cycle.id})</option>`,
  );
  return html`<section class="panel" aria-labelledby="upload-title">
  <h2 id="upload-title">Upload a file</h2>
  <p>First the file is checked: nothing changes until you import it. The import is the one <code>compplan import</code> runs, with the same rules, limits and messages.</p>
  <form method="post" action="${DATA_PAGE}/check" enctype="multipart/form-data" class="stack upload-form" data-upload-progress="${DATA_PAGE}/progress">
    ${sessionFormFields(view.csrfToken)}
    <fieldset class="field">
      <legend>What the file holds</legend>
      <div class="radio-row"><input type="radio" id="format-data-set" name="format" value="data-set" checked> <label for="format-data-set">A data set: the organisation and its merit cycles, as JSON or NDJSON (.json, .ndjson)</label></div>
      <div class="radio-row"><input type="radio" id="format-csv" name="format" value="csv"> <label for="format-csv">One merit cycle's employees, as CSV or an Excel workbook (.csv, .xlsx)</label></div>
    </fieldset>
    <div class="field">
      <label for="upload-cycle">Merit cycle (for a CSV file)</label>
      <select id="upload-cycle" name="cycle"${view.cycles.length === 0 ? html` disabled` : ''}>${cycles}</select>
    </div>
    <div class="field">
      <label for="upload-sheet">Sheet (for an Excel workbook; empty: the first visible sheet)</label>
      <input id="upload-sheet" name="sheet" type="text" maxlength="200">
    </div>
    <div class="field">
      <label for="upload-file">File</label>
      <input id="upload-file" name="file" type="file" required accept=".csv,.xlsx,.json,.ndjson,.jsonl,text/csv,application/json,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" aria-describedby="upload-limits">
      <p class="hint" id="upload-limits">Up to ${inMiB(UPLOAD_MAX_BYTES)}: NDJSON of any size within it; a JSON file up to ${inMiB(JSON_MAX_BYTES)}, a CSV file up to ${inMiB(CSV_MAX_BYTES)} (they are read whole).</p>
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
      <input id="prune" name="prune" type="checkbox" value="on"${upload.pruneRequired ? html` checked required` : ''} aria-describedby="prune-hint">
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

function problemList(view: DataPageView): SafeHtml {
  const problems = view.problems ?? [];
  if (problems.length === 0) return html``;
  return html`<section class="panel panel-danger" aria-labelledby="problems-title">
  <h2 id="problems-title">Problems</h2>
  <ol class="problems">${problems.map((problem) => html`<li>${problem}</li>`)}</ol>
</section>`;
}

export function dataPage(view: DataPageView): string {
  return settingsLayout(
    view,
    'data',
    'Data',
    html`<p class="lead">The merit cycles and employees the API serves for ${view.organization.name}, and loading new data.</p>
${view.error && alert('error', view.error)}
${view.resent && alert('info', RESENT_NOTICE)}
${view.checkGone && alert('info', 'That check has expired or its file was imported already. Upload the file again.')}
${view.imported && importedNotice(view.imported)}
${view.running && !view.error && alert('info', busyMessage(view, view.running))}
${problemList(view)}
${view.checked && checkedPanel(view, view.checked)}
<section class="panel" aria-labelledby="cycles-title">
  <h2 id="cycles-title">Merit cycles</h2>
  ${cyclesTable(view.cycles)}
</section>
${uploadForm(view)}`,
  );
}
