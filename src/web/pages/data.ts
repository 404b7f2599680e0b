// Settings → Data (owners and administrators; docs/web-app.md): the organisation's merit
// cycles with their status, employee count and last import; and loading a file — CSV (one
// cycle's employees), JSON or NDJSON — in two steps through the import `compplan import`
// runs: a check that writes nothing (the import, rolled back), then the Import of exactly
// the checked file, refused if the organisation's data changed in between.
import { createWriteStream } from 'node:fs';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ManagementError } from '../../errors.js';
import { listCycleOverviews } from '../../import/cycle-imports.js';
import { ImportError } from '../../import/errors.js';
import { type CheckedImport, StaleCheckError } from '../../import/load.js';
import { problemsForPeople } from '../../import/problems-for-people.js';
import { checkStagedFile, importStagedFile, type StagedFile } from '../../import/staged-file.js';
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
import {
  busyMessage,
  type DataPageView,
  dataPage,
  type ImportedView,
  tooLargeMessage,
} from './data.views.js';

const DATA_PAGE = PAGES.data;

// Room for the form's other fields and the multipart framing around the file.
const ENVELOPE_BYTES = 64 * 1024;

/** A refusal shown on the page: its status and message (or the problems of a file). */
class Refusal extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly problems: string[] = [],
  ) {
    super(message);
  }
}

export const dataPages: Page = (app, context) => {
  const { signedIn, signedInPost, view } = context;
  const { changeRetentionDays } = context.settings;
  // The uploads of this server's organisations; their files are removed when it stops.
  const staging = new UploadStaging();
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
    const running = staging.progressOf(base.organization.id);
    return sendPage(
      reply,
      status,
      dataPage({
        ...base,
        cycles,
        checked,
        checkGone: token !== '' && !checked,
        running,
        resent: query[RESENT] !== undefined,
        ...extra,
      }),
    );
  }

  const refused = (request: FastifyRequest, reply: FastifyReply, refusal: Refusal) => {
    if (refusal.status === 413 || refusal.status === 409) reply.header('connection', 'close');
    return render(request, reply, refusal.status, {
      error: refusal.message,
      problems: refusal.problems,
    });
  };

  app.get(routeOf(DATA_PAGE), signedIn, async (request, reply) => {
    const imported = await takeOneView<ImportedView>(app.db, context.sessionIdOf(request));
    return render(request, reply, 200, imported?.kind === 'imported' ? { imported } : {});
  });

  // What the running upload of the organisation is doing (the page polls it).
  app.get(`${routeOf(DATA_PAGE)}/progress`, signedIn, async (request, reply) => {
    const progress = staging.progressOf(view(request).organization.id);
    return reply
      .header('cache-control', 'no-store')
      .send(progress ? { running: true, ...progress } : { running: false });
  });

  // The check: the file streamed into the import's staging area, then the import run and
  // rolled back. The form's token is checked before a byte of the file is kept.
  app.post(`${routeOf(DATA_PAGE)}/check`, signedIn, async (request, reply) => {
    const signed = view(request);
    const length = Number(request.headers['content-length'] ?? Number.NaN);
    try {
      if (length > UPLOAD_MAX_BYTES + ENVELOPE_BYTES) throw new Refusal(413, tooLargeMessage());
      if (!request.isMultipart()) throw new Refusal(400, 'Choose a file to upload.');
      const start = {
        phase: 'receiving' as const,
        total: Number.isFinite(length) ? length : null,
        by: signed.user.email,
      };
      const token = await staging.exclusive(signed.organization.id, start, async (progress) => {
        const upload = await receive(request, progress);
        try {
          progress.phase = 'checking';
          progress.total = upload.size;
          progress.done = 0;
          return await check(signed, upload, (done) => {
            progress.done = done;
          });
        } catch (error) {
          await removeFile(upload.file.path);
          throw error;
        }
      });
      request.log.info({ userId: signed.user.id }, 'upload checked');
      return redirect(reply, `${DATA_PAGE}?check=${encodeURIComponent(token)}`);
    } catch (error) {
      if (error instanceof UploadBusyError) {
        return refused(request, reply, new Refusal(409, busyMessage(signed, error.running)));
      }
      if (error instanceof Refusal) return refused(request, reply, error);
      throw error;
    }
  });

  interface Received {
    token: string;
    file: StagedFile;
    size: number;
  }

  /** The upload's form fields, then its file, streamed to the staging area. */
  async function receive(request: FastifyRequest, progress: { done: number }): Promise<Received> {
    const part = await request.file({
      limits: { fileSize: UPLOAD_MAX_BYTES, files: 1, fields: 8, fieldSize: 1024, parts: 10 },
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
    try {
      // wx, 0600: a new file only this server's user reads.
      await pipeline(part.file, count, createWriteStream(path, { flags: 'wx', mode: 0o600 }));
      // Cut off at the limit: the rest of the body was never read.
      if (part.file.truncated) throw new app.multipartErrors.RequestFileTooLargeError();
    } catch (error) {
      await removeFile(path);
      if (error instanceof app.multipartErrors.RequestFileTooLargeError) {
        throw new Refusal(413, tooLargeMessage());
      }
      // The browser went away, or the body broke off: nothing is kept.
      request.log.info({ err: error }, 'upload abandoned');
      throw new Refusal(400, 'The upload did not complete; nothing was changed. Try again.');
    }
    // The browser's name, for NDJSON by its extension, as on the command line.
    const name = part.filename.slice(-200);
    return {
      token,
      size,
      file: { path, name, format, cycleId: format === 'csv' ? cycleId : undefined },
    };
  }

  /** The check, with pruning (to count what it removes) and, when it removes some, without. */
  async function check(signed: Signed, upload: Received, onRead: (done: number) => void) {
    const base = {
      organization: signed.organization.slug,
      changeRetentionDays,
    };
    let checked: CheckedImport;
    try {
      checked = await app.database.withOwnConnection((database) =>
        checkStagedFile(database, upload.file, { ...base, prune: true }, onRead),
      );
    } catch (error) {
      throw await refusalOf(error, upload.file);
    }
    let pruneRequired: string | undefined;
    if (checked.summary.employees.removed > 0) {
      try {
        await app.database.withOwnConnection((database) =>
          checkStagedFile(database, upload.file, { ...base, prune: false }, () => undefined),
        );
      } catch (error) {
        const refusal = await refusalOf(error, upload.file);
        pruneRequired = refusal.problems[0] ?? refusal.message;
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
      size: upload.size,
      checked,
      ...(pruneRequired !== undefined && { pruneRequired }),
    });
    return upload.token;
  }

  async function refusalOf(error: unknown, file: StagedFile): Promise<Refusal> {
    if (error instanceof ImportError) {
      const problems = await problemsForPeople(error, file);
      const count = error.total;
      return new Refusal(
        422,
        `The file was not imported: ${count === 1 ? 'it has a problem' : `it has ${count.toLocaleString('en')} problems`}. Nothing was changed.`,
        problems,
      );
    }
    if (error instanceof StaleCheckError) return new Refusal(409, error.message);
    if (error instanceof ManagementError) return new Refusal(422, error.message);
    throw error;
  }

  // The Import: exactly the checked file, if the data is as it was at the check.
  app.post(`${routeOf(DATA_PAGE)}/import`, signedInPost, async (request, reply) => {
    const signed = view(request);
    const upload = staging.find(formField(request, 'token'), signed.organization.id);
    if (!upload) {
      return render(request, reply, 410, {
        error: 'This check has expired or its file was imported already. Upload the file again.',
      });
    }
    const prune = formField(request, 'prune') === 'on';
    if (upload.pruneRequired && !prune) {
      return render(request, reply, 422, {
        error: `Without removing the employees the file no longer lists, the import is refused: ${upload.pruneRequired}`,
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
        return refused(request, reply, new Refusal(409, busyMessage(signed, error.running)));
      }
      // The data changed, or the import failed: the checked file is of no more use.
      await staging.discard(upload.token);
      return refused(request, reply, await refusalOf(error, upload));
    }
  });
};
