// Settings → Data (owners and administrators; docs/web-app.md): the organisation's merit
// cycles with their status, employee count and last import.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type CycleOverview, listCycleOverviews } from '../../../import/cycle-imports.js';
import { html, type SafeHtml } from '../html.js';
import { sendPage } from '../http.js';
import { type Signed, settingsLayout, time } from '../views.js';
import { type PageContext, routeOf } from './context.js';

export const DATA_PAGE = '/app/settings/data';

const STATUS_NAMES: Record<string, string> = {
  active: 'Active',
  inactive: 'Inactive',
  finalized: 'Finalized',
};

interface DataView extends Signed {
  cycles: CycleOverview[];
}

export function registerDataPages(app: FastifyInstance, context: PageContext): void {
  const { signedIn, view } = context;

  async function render(request: FastifyRequest, reply: FastifyReply, status: number) {
    const base = view(request);
    const cycles = await listCycleOverviews(app.db, base.organization.id);
    return sendPage(reply, status, dataPage({ ...base, cycles }));
  }

  app.get(routeOf(DATA_PAGE), signedIn, async (request, reply) => render(request, reply, 200));
}

const count = (n: number) => n.toLocaleString('en');

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
  return html`<div class="table-wrap"><table class="cycle-list stacked">
  <thead><tr><th scope="col">Merit cycle</th><th scope="col">Status</th><th scope="col" class="number">Employees</th><th scope="col">Last import</th></tr></thead>
  <tbody>
${rows}
  </tbody>
</table></div>`;
}

function dataPage(view: DataView): string {
  return settingsLayout(
    view,
    'data',
    'Data',
    html`<p class="lead">The merit cycles and employees the API serves for ${view.organization.name}.</p>
<section class="panel" aria-labelledby="cycles-title">
  <h2 id="cycles-title">Merit cycles</h2>
  ${cyclesTable(view.cycles)}
</section>`,
  );
}
