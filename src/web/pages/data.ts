// Settings → Data (owners and administrators; docs/web-app.md): the organisation's merit
// cycles with their status, employee count, last import and CSV template; creating a merit
// cycle (through the import, so it is recorded as one); and loading a file — CSV (one
// cycle's employees), JSON or NDJSON — in two steps through the import `compplan import`
// runs: a check that writes nothing (the import, rolled back), then the Import of exactly
// the checked file, refused if the organisation's data changed in between. The form keeps
// its choices after a check or a refusal; a file that is not what was chosen says what it
// looks like, read from its content.
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ManagementError } from '../../errors.js';
import { listCycleOverviews } from '../../import/cycle-imports.js';
import { cycleTemplate, templateCsv, templateXlsx } from '../../import/cycle-template.js';
import { ImportError, MAX_LISTED_PROBLEMS } from '../../import/errors.js';
import { type ContentKind, contentKindOf } from '../../import/file-kind.js';
import { importDataSet, StaleCheckError } from '../../import/load.js';
import { problemsForPeople } from '../../import/problems-for-people.js';
import { SheetProblemsError } from '../../import/sheet-problems.js';
import {
  AMOUNT_WRITINGS,
  DATE_WRITINGS,
  ENCODINGS,
  type ReadingChoices,
} from '../../import/sheet-reading.js';
import {
  type CheckedFile,
  checkStagedFile,
  importStagedFile,
  type StagedFile,
} from '../../import/staged-file.js';
import { UploadTooSlowError, watchPace } from '../../import/upload-pace.js';
import {
  removeFile,
  UPLOAD_MAX_BYTES,
  UploadBusyError,
  type UploadFormat,
  UploadStaging,
} from '../../import/uploads.js';
import { keepForOneView, takeOneView } from '../../sessions/one-time-view.js';
import type { Page, Signed } from '../context.js';
import { formField, redirect, sendPage } from '../http.js';
import { PAGES, RESENT, routeOf } from '../paths.js';
import { newCycleOfForm } from './data.cycles.js';
import {
  busyMessage,
  type CycleCreatedView,
  checkElsewhereMessage,
  type DataPageView,
  dataPage,
  type ImportedView,
  tooLargeMessage,
  type UploadChoices,
} from './data.views.js';

const DATA_PAGE = PAGES.data;
const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

// Room for the form's other fields and the multipart framing around the file.
const ENVELOPE_BYTES = 64 * 1024;

/** A refusal shown on the page: its status and message (or the problems of a file). */
class Refusal extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly problems: string[] = [],
    /** More for the page: a spreadsheet's grouped problems, the choice to make instead. */
    readonly shown: Partial<DataPageView> = {},
  ) {
    super(message);
  }
}

const CSV_CHOICE = "One merit cycle's employees, as CSV or an Excel workbook";
const DATA_SET_CHOICE = 'A data set: the organisation and its merit cycles';

/** A file that is not what the form says it holds, said in what it looks like. */
function kindMismatch(chosen: UploadChoices, looks: ContentKind): Refusal {
  const message = {
    csv: `This file looks like a CSV file (a spreadsheet saved as CSV). Choose '${CSV_CHOICE}' and the cycle to load it into. Nothing was changed.`,
    workbook: `This file looks like an Excel workbook. Choose '${CSV_CHOICE}' and the cycle to load it into. Nothing was changed.`,
    'data-set': `This file looks like a data set in JSON or NDJSON (it starts with { or [), not a spreadsheet. Choose '${DATA_SET_CHOICE}' to load it. Nothing was changed.`,
  }[looks];
  return new Refusal(422, message, [], { choices: { ...chosen, format: formatOf(looks) } });
}

/** The form's choice for a kind of content: a workbook holds one cycle's employees too. */
const formatOf = (kind: ContentKind) => (kind === 'data-set' ? 'data-set' : 'csv');

/** The form's reading choices for a CSV file (sheet-reading.ts); absent: the defaults. */
function readingOfForm(field: (name: string) => string): Partial<ReadingChoices> {
  const one = <T extends string>(name: string, values: readonly T[]) => {
    const value = field(name);
    return (values as readonly string[]).includes(value) ? { [name]: value as T } : {};
  };
  return {
    ...one('dates', DATE_WRITINGS),
    ...one('amounts', AMOUNT_WRITINGS),
    ...one('encoding', ENCODINGS),
    ...(field('ignoreUnknownColumns') === 'on' && { ignoreUnknownColumns: true }),
  };
}

export const dataPages: Page = (app, context) => {
  const { signedIn, signedInPost, view } = context;
  const { changeRetentionDays } = context.settings;
  // The uploads of this server's organisations; their files are removed when it stops.
  const staging = new UploadStaging(app.db);
  // A killed instance's staged files (of this host) go when an instance starts.
  app.addHook('onReady', () => staging.reclaim());
  app.addHook('onClose', () => staging.close());

  async function render(
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    extra: Partial<DataPageView> = {},
  ) {
    const base = view(request);
    const cycles = await listCycleOverviews(app.db, base.organization.id);
    const query = (request.query ?? {}) as Record<string, unknown>;
    const token = typeof query.check === 'string' ? query.check : '';
    const checked = token ? staging.find(token, base.organization.id) : undefined;
    const running = await staging.progressOf(base.organization.id);
    return sendPage(
      reply,
      status,
      dataPage({
        ...base,
        cycles,
        checked,
        checkGone: token !== '' && !checked,
        checkElsewhere: token !== '' && !checked && staging.madeElsewhere(token),
        running,
        resent: query[RESENT] !== undefined,
        ...extra,
      }),
    );
  }

  const refused = (
    request: FastifyRequest,
    reply: FastifyReply,
    refusal: Refusal,
    choices?: UploadChoices,
  ) => {
    if ([408, 409, 413].includes(refusal.status)) reply.header('connection', 'close');
    return render(request, reply, refusal.status, {
      error: refusal.message,
      problems: refusal.problems,
      choices,
      ...refusal.shown,
    });
  };

  app.get(routeOf(DATA_PAGE), signedIn, async (request, reply) => {
    const sessionId = context.sessionIdOf(request);
    const shown = await takeOneView<ImportedView | CycleCreatedView>(app.db, sessionId);
    if (shown?.kind === 'imported') return render(request, reply, 200, { imported: shown });
    if (shown?.kind === 'cycle-created') {
      return render(request, reply, 200, { cycleCreated: shown });
    }
    return render(request, reply, 200);
  });

  // What the running upload of the organisation is doing (the page polls it).
  app.get(`${routeOf(DATA_PAGE)}/progress`, signedIn, async (request, reply) => {
    const progress = await staging.progressOf(view(request).organization.id);
    return reply
      .header('cache-control', 'no-store')
      .send(progress ? { running: true, ...progress } : { running: false });
  });

  // The check: the file streamed into the import's staging area, then the import run and
  // rolled back. The form's token is checked before a byte of the file is kept.
  // Timed by the file's progress, not as a whole request (upload-pace.ts).
  const byProgress = { ...signedIn, config: { timedByProgress: true } };
  app.post(`${routeOf(DATA_PAGE)}/check`, byProgress, async (request, reply) => {
    const signed = view(request);
    const length = Number(request.headers['content-length'] ?? Number.NaN);
    // The form's choices, once read: shown again whatever the outcome.
    const form: { choices?: UploadChoices } = {};
    try {
      if (length > UPLOAD_MAX_BYTES + ENVELOPE_BYTES) throw new Refusal(413, tooLargeMessage());
      if (!request.isMultipart()) throw new Refusal(400, 'Choose a file to upload.');
      const start = {
        phase: 'receiving' as const,
        total: Number.isFinite(length) ? length : null,
        by: signed.user.email,
      };
      const token = await staging.exclusive(signed.organization.id, start, async (progress) => {
        const upload = await receive(request, progress, form);
        try {
          const looks = await contentKindOf(upload.file.path);
          if (looks !== undefined && formatOf(looks) !== upload.file.format) {
            throw kindMismatch(form.choices ?? {}, looks);
          }
          progress.phase = 'checking';
          progress.total = upload.size;
          progress.done = 0;
          const token = await check(signed, upload, (done) => {
            progress.done = done;
          });
          // The browser left while the file was checked: nobody will import it.
          if (request.raw.socket.destroyed) {
            await staging.discard(token);
            throw new Refusal(400, 'The upload did not complete; nothing was changed.');
          }
          return token;
        } catch (error) {
          await removeFile(upload.file.path);
          throw error;
        }
      });
      request.log.info({ userId: signed.user.id }, 'upload checked');
      return redirect(reply, `${DATA_PAGE}?check=${encodeURIComponent(token)}`);
    } catch (error) {
      if (error instanceof UploadBusyError) {
        const refusal = new Refusal(409, busyMessage(signed, error.running));
        return refused(request, reply, refusal, form.choices);
      }
      if (error instanceof Refusal) return refused(request, reply, error, form.choices);
      throw error;
    }
  });

  interface Received {
    token: string;
    file: StagedFile;
    size: number;
  }

  /** The upload's form fields, then its file, streamed to the staging area. */
  async function receive(
    request: FastifyRequest,
    progress: { done: number },
    form: { choices?: UploadChoices },
  ): Promise<Received> {
    const part = await request.file({
      limits: { fileSize: UPLOAD_MAX_BYTES, files: 1, fields: 12, fieldSize: 1024, parts: 14 },
    });
    if (!part) throw new Refusal(400, 'Choose a file to upload.');
    const field = (name: string) => {
      const value = part.fields[name];
      return value && !Array.isArray(value) && value.type === 'field' ? String(value.value) : '';
    };
    if (!context.formTokenOk(request, field('_csrf'))) {
      part.file.resume();
      request.log.warn({ url: request.url }, 'upload refused: missing or wrong CSRF token');
      throw new Refusal(403, 'The form had expired. Reload the page and upload the file again.');
    }
    const format: UploadFormat | undefined =
      field('format') === 'csv' ? 'csv' : field('format') === 'data-set' ? 'data-set' : undefined;
    const cycleId = field('cycle');
    form.choices = { format, cycleId, reading: readingOfForm(field) };
    if (!format || (format === 'csv' && cycleId === '')) {
      part.file.resume();
      throw new Refusal(
        422,
        format ? 'Choose the merit cycle the CSV file is for.' : 'Choose what the file holds.',
      );
    }
    if (part.filename === '') {
      part.file.resume();
      throw new Refusal(400, 'Choose a file to upload.');
    }
    const { token, path } = await staging.newPath();
    let size = 0;
    const count = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        size += chunk.length;
        progress.done = size;
        done(null, chunk);
      },
    });
    // Cut off at once at the limit (a chunked body has no length to refuse it by first), or
    // when it stalls or trickles: the rest of the body is never read, the connection closed.
    const pace = watchPace(context.settings.uploadPace, (error) => count.destroy(error));
    part.file.on('data', (chunk: Buffer) => pace.arrived(chunk.length));
    part.file.once('limit', () =>
      count.destroy(new app.multipartErrors.RequestFileTooLargeError()),
    );
    try {
      // wx, 0600: a new file only this server's user reads.
      await pipeline(part.file, count, createWriteStream(path, { flags: 'wx', mode: 0o600 }));
      if (part.file.truncated) throw new app.multipartErrors.RequestFileTooLargeError();
    } catch (error) {
      pace.stop();
      await removeFile(path);
      if (error instanceof app.multipartErrors.RequestFileTooLargeError) {
        throw new Refusal(413, tooLargeMessage());
      }
      if (error instanceof UploadTooSlowError) {
        request.log.info({ stalled: error.stalled }, 'upload cut off');
        throw new Refusal(
          408,
          error.stalled
            ? 'The upload stopped: nothing arrived for a while, so it was cut off. Nothing was changed. Try again.'
            : 'The upload was too slow to finish, so it was cut off. Nothing was changed. Try again on a faster connection.',
        );
      }
      // The browser went away, or the body broke off: nothing is kept.
      request.log.info({ err: error }, 'upload abandoned');
      throw new Refusal(400, 'The upload did not complete; nothing was changed. Try again.');
    }
    pace.stop();
    // The browser's name, for NDJSON by its extension, as on the command line.
    const name = part.filename.slice(-200);
    return {
      token,
      size,
      file: {
        path,
        name,
        format,
        cycleId: format === 'csv' ? cycleId : undefined,
        reading: format === 'csv' ? readingOfForm(field) : undefined,
        // An Excel workbook's sheet (the engine tells a workbook by its content).
        sheet: format === 'csv' && field('sheet').trim() !== '' ? field('sheet').trim() : undefined,
      },
    };
  }

  /** The check, with pruning (to count what it removes) and, when it removes some, without. */
  async function check(signed: Signed, upload: Received, onRead: (done: number) => void) {
    const base = {
      organization: signed.organization.slug,
      changeRetentionDays,
    };
    let checked: CheckedFile;
    try {
      // Every problem kept (up to MAX_LISTED_PROBLEMS), for the list to download.
      const options = { ...base, prune: true, keepProblems: MAX_LISTED_PROBLEMS };
      checked = await app.database.withOwnConnection((database) =>
        checkStagedFile(database, upload.file, options, onRead),
      );
    } catch (error) {
      throw await refusalOf(error, upload.file, signed.user.id);
    }
    let pruneRequired: string | undefined;
    if (checked.summary.employees.removed > 0) {
      try {
        await app.database.withOwnConnection((database) =>
          checkStagedFile(database, upload.file, { ...base, prune: false }, () => undefined),
        );
      } catch (error) {
        const refusal = await refusalOf(error, upload.file);
        pruneRequired =
          refusal.shown.sheet?.groups[0]?.problem ?? refusal.problems[0] ?? refusal.message;
      }
    }
    await staging.keep({
      token: upload.token,
      organizationId: signed.organization.id,
      userId: signed.user.id,
      path: upload.file.path,
      name: upload.file.name,
      format: upload.file.format,
      ...(upload.file.cycleId !== undefined && { cycleId: upload.file.cycleId }),
      ...(upload.file.reading !== undefined && { reading: upload.file.reading }),
      ...(upload.file.sheet !== undefined && { sheet: upload.file.sheet }),
      size: upload.size,
      checked,
      ...(checked.readAs !== undefined && { readAs: checked.readAs }),
      ...(pruneRequired !== undefined && { pruneRequired }),
    });
    return upload.token;
  }

  /**
   * A refused file said for the page; the whole list of its problems is kept for
   * `userId` to download as CSV (`problems.csv`), when given (the check's first run).
   */
  async function refusalOf(error: unknown, file: StagedFile, userId?: string): Promise<Refusal> {
    const notImported = (count: number) =>
      `The file was not imported: ${count === 1 ? 'it has a problem' : `it has ${count.toLocaleString('en')} problems`}. Nothing was changed.`;
    if (error instanceof SheetProblemsError) {
      if (userId !== undefined) await staging.keepProblems(userId, error.csv());
      const total = error.sheetTotal;
      const listed = error.sheetProblems.length;
      return new Refusal(422, notImported(total), [], {
        sheet: { groups: error.groups, readAs: error.readAs, total, listed },
      });
    }
    if (error instanceof ImportError) {
      const problems = await problemsForPeople(error, file);
      if (userId !== undefined) await staging.keepProblems(userId, problems.csv);
      return new Refusal(422, notImported(problems.total), problems.shown, {
        problemCount: { total: problems.total, listed: problems.listed },
      });
    }
    if (error instanceof StaleCheckError) return new Refusal(409, error.message);
    if (error instanceof ManagementError) return new Refusal(422, error.message);
    throw error;
  }

  // The last refused file's problems of this user, every one kept, as CSV.
  app.get(`${routeOf(DATA_PAGE)}/problems.csv`, signedIn, async (request, reply) => {
    const csv = await staging.problemsOf(view(request).user.id);
    if (csv === undefined) return context.notFound(reply);
    return reply
      .header('cache-control', 'no-store')
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', 'attachment; filename="problems.csv"')
      .send(csv);
  });

  // The Import: exactly the checked file, if the data is as it was at the check.
  app.post(`${routeOf(DATA_PAGE)}/import`, signedInPost, async (request, reply) => {
    const signed = view(request);
    const token = formField(request, 'token');
    const upload = staging.find(token, signed.organization.id);
    if (!upload) {
      return render(request, reply, 410, {
        error: staging.madeElsewhere(token)
          ? checkElsewhereMessage
          : 'This check has expired or its file was imported already. Upload the file again.',
      });
    }
    const prune = formField(request, 'prune') === 'on';
    // The checked file's choices, for the form shown again.
    const choices: UploadChoices = {
      format: upload.format,
      cycleId: upload.cycleId,
      reading: upload.reading,
    };
    if (upload.pruneRequired && !prune) {
      return render(request, reply, 422, {
        error: `Without removing the employees the file no longer lists, the import is refused: ${upload.pruneRequired}`,
        checked: upload,
        prune,
        choices,
      });
    }
    try {
      const start = { phase: 'importing' as const, total: upload.size, by: signed.user.email };
      const summary = await staging.exclusive(signed.organization.id, start, (progress) =>
        app.database.withOwnConnection((database) =>
          importStagedFile(
            database,
            upload,
            {
              organization: signed.organization.slug,
              actor: context.actorOf(request),
              changeRetentionDays,
              checkedAt: upload.checked.counter,
              prune,
            },
            (done) => {
              progress.done = done;
            },
          ),
        ),
      );
      await staging.discard(upload.token);
      request.log.info({ userId: signed.user.id, prune }, 'upload imported');
      // This instance's dispatcher, if it runs one, sends the import's events now.
      if (app.hasDecorator('webhooks')) app.webhooks.poke();
      const imported: ImportedView = { kind: 'imported', name: upload.name, summary };
      await keepForOneView(app.db, context.sessionIdOf(request), imported);
      return redirect(reply, DATA_PAGE);
    } catch (error) {
      if (error instanceof UploadBusyError) {
        const shown = { checked: upload, prune };
        return refused(
          request,
          reply,
          new Refusal(409, busyMessage(signed, error.running), [], shown),
        );
      }
      // The data changed, or the import failed: the checked file is of no more use.
      await staging.discard(upload.token);
      return refused(request, reply, await refusalOf(error, upload), choices);
    }
  });

  // A cycle's templates: the header its spreadsheet import reads and one example row, as
  // CSV and as an Excel workbook with typed cells.
  app.get(`${routeOf(DATA_PAGE)}/cycles/:id/template.csv`, signedIn, async (request, reply) => {
    const { id } = request.params as { id: string };
    const template = await cycleTemplate(app.db, view(request).organization.id, id);
    if (!template) return context.notFound(reply);
    return reply
      .header('cache-control', 'no-store')
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="template-${id}.csv"`)
      .send(templateCsv(template.columns));
  });
  app.get(`${routeOf(DATA_PAGE)}/cycles/:id/template.xlsx`, signedIn, async (request, reply) => {
    const { id } = request.params as { id: string };
    const template = await cycleTemplate(app.db, view(request).organization.id, id);
    if (!template) return context.notFound(reply);
    return reply
      .header('cache-control', 'no-store')
      .header('content-type', XLSX_TYPE)
      .header('content-disposition', `attachment; filename="template-${id}.xlsx"`)
      .send(await templateXlsx(template.name, template.columns));
  });

  // A new merit cycle, created by the import (recorded in the audit log as an import of
  // the user): the organisation as it is and the one cycle, without employees.
  app.post(`${routeOf(DATA_PAGE)}/cycles`, signedInPost, async (request, reply) => {
    const signed = view(request);
    const cycles = await listCycleOverviews(app.db, signed.organization.id);
    const read = newCycleOfForm(
      (name) => formField(request, name),
      cycles.map((cycle) => cycle.name),
    );
    if ('form' in read) {
      return render(request, reply, 422, {
        error: 'The merit cycle was not created: see what to change at its fields below.',
        newCycle: read.form,
      });
    }
    const { cycle } = read;
    const id = `mc_${randomUUID()}`;
    const dataSet = {
      organization: { slug: signed.organization.slug, name: signed.organization.name },
      meritCycles: [
        {
          id,
          name: cycle.name,
          status: cycle.status,
          startDate: `${cycle.startDate}T00:00:00.000Z`,
          endDate: `${cycle.endDate}T00:00:00.000Z`,
          currency: cycle.currency,
        },
      ],
    };
    try {
      const start = { phase: 'importing' as const, total: null, by: signed.user.email };
      await staging.exclusive(signed.organization.id, start, () =>
        app.database.withOwnConnection((database) =>
          importDataSet(database, dataSet, {
            organization: signed.organization.slug,
            actor: context.actorOf(request),
            changeRetentionDays,
          }),
        ),
      );
    } catch (error) {
      const newCycle = { values: { ...cycle }, errors: {} };
      if (error instanceof UploadBusyError) {
        reply.header('connection', 'close');
        return render(request, reply, 409, {
          error: busyMessage(signed, error.running),
          newCycle,
        });
      }
      if (error instanceof ImportError || error instanceof ManagementError) {
        request.log.info({ err: error }, 'merit cycle refused by the import');
        return render(request, reply, 422, {
          error: 'The merit cycle was not created: the import refused it. Nothing was changed.',
          newCycle,
        });
      }
      throw error;
    }
    request.log.info({ userId: signed.user.id, meritCycleId: id }, 'merit cycle created');
    const created: CycleCreatedView = { kind: 'cycle-created', id, name: cycle.name };
    await keepForOneView(app.db, context.sessionIdOf(request), created);
    return redirect(reply, DATA_PAGE);
  });
};
