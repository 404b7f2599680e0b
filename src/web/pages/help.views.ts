// GET /app/help/import: the import format for someone with a spreadsheet, served by
// compplan itself (decisions §11: every problem links it). Each kind of problem the check
// reports (src/import/sheet-problems.ts) is explained at its anchor (`#date`), from the
// same words the check uses; docs/import-format.md is the whole reference.
import { kindsExplained } from '../../import/sheet-problems.js';
import { AMOUNT_WRITINGS, DATE_WRITINGS, DEFAULT_CHOICES } from '../../import/sheet-reading.js';
import { html } from '../html.js';
import { singleCard } from '../layout.js';

export function importHelpPage(): string {
  const kinds = kindsExplained(DEFAULT_CHOICES);
  return singleCard(
    'Loading employees from a spreadsheet',
    html`<p class="lead">Settings → Data loads one merit cycle's employees from a spreadsheet — an Excel workbook (.xlsx) or a CSV file: a first row of column names, then one row per employee. Everything in the file is checked before anything is changed; a file with a problem changes nothing.</p>
<h2 id="start">Starting from a template</h2>
<ol>
  <li>On Settings → Data, each merit cycle has an <strong>Excel template</strong> and a <strong>CSV template</strong>: the first row of column names its import reads, and one example row. The Excel template's second sheet, “Columns”, names each column and says what to write in it.</li>
  <li>A new merit cycle is made with <strong>New merit cycle</strong> on the same page (name, dates, status, currency); its templates are then offered, and the cycle is chosen on the upload form.</li>
  <li>Replace the example row with one row per employee, keep the first row as it is, and upload the file with <strong>Check file</strong>. The check says what the import would do; <strong>Import</strong> then does it.</li>
</ol>
<h2 id="columns">Columns</h2>
<p>Needed: <code>email</code>, <code>firstName</code>, <code>lastName</code>, <code>currencyCode</code> (a code such as USD), <code>eligibilityStatus</code> (Eligible or Ineligible). Optional: <code>id</code>, <code>preferredName</code>, <code>currencyCode.value</code>, and the merit cycle's own columns as <code>columns.KEY</code> (a part of a composite column: <code>columns.KEY.PART</code>). The cycle's templates, or an export of its employees, have the header to start from. A <code>columns.KEY</code> the merit cycle has not had before is loaded as text.</p>
<h2 id="workbooks">Excel workbooks</h2>
<p>An Excel workbook (.xlsx, as Excel, LibreOffice or Google Sheets save it) is read with its cells as they are typed: a date cell is a date and a number cell a number, so there is nothing to choose about how dates and amounts are written, and the choices below apply to CSV files only. The first visible sheet is read, or the sheet you name on the form. A date or an amount typed as text is read only when written 2025-03-15 or 85000.00.</p>
<p>Not read: a workbook protected with a password, an Excel 97–2003 file (.xls), a formula whose result was not saved, an error cell (#N/A), merged cells in the first row. Each is said with what to do.</p>
<h2 id="reading">CSV files: what is read as it is</h2>
<ul>
  <li>A comma, a semicolon or a tab between values (the first row tells which; every row must use the same).</li>
  <li>TRUE and FALSE, Yes and No, in any letter case, for yes-or-no columns.</li>
  <li>Eligible, eligible or ELIGIBLE; currency codes in any letter case.</li>
  <li>A byte order mark at the start (Excel's “CSV UTF-8”).</li>
</ul>
<h2 id="choices">CSV files: what you choose</h2>
<ul>
  <li>How the file writes dates: ${DATE_WRITINGS.join(', ')}.</li>
  <li>How the file writes amounts and numbers: ${AMOUNT_WRITINGS.join(', ')} (no currency sign).</li>
  <li>The file's encoding: UTF-8, or Windows-1252 (older Excel on Windows, “CSV (Comma delimited)”).</li>
  <li>Whether columns the import does not know are ignored.</li>
</ul>
<p>The check says how it read the file (“Read as: …”). The problems it finds download as a CSV file (row, column, value, problem) to fix in your spreadsheet.</p>
<h2 id="problems">Problems, and what to do</h2>
<dl>
${kinds.map(({ kind, problem, remedy }) => html`<dt id="${kind}">${problem}</dt><dd>${remedy}</dd>`)}
</dl>`,
    'card-wide',
  );
}
