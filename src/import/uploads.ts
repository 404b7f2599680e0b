// The import's staging area for files uploaded in the web application (Settings → Data,
// docs/web-app.md). An upload is written here as it arrives — never held whole in memory,
// never anywhere else on the server's disk — then checked; the checked file waits here,
// under a random token, for the Import that applies exactly it, and is removed by that
// import, by a newer upload of the same user, after UPLOAD_TTL_MS, when the upload fails
// or is abandoned, and when the server stops.
//
// One upload (or import) at a time per organisation, on every instance: a second one is
// refused while the first runs. The slot is a lease in the database (upload_slots,
// migration 0017), renewed every LEASE_MS / 3 while the upload runs and deleted when it
// ends, however it ends; a slot whose instance was killed is taken over once its lease
// expires, and at once by an instance on the same host that sees its process gone. Each
// process stages its files in a directory of its own, named with its process id
// (`compplan-import-staging-PID-…`); an instance starting, and one taking over a slot of
// this host, removes those of processes of this host that are gone, so a killed
// instance's files do not stay.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely, Selectable } from 'kysely';
import type { Database, UploadSlotsTable } from '../db/types.js';
import type { CheckedImport } from './load.js';
import type { ReadingChoices } from './sheet-reading.js';

/** The largest file the web application takes (the CSV and JSON limits are lower). */
export const UPLOAD_MAX_BYTES = 100 * 1024 * 1024;
/** How long a checked file waits for its Import. */
export const UPLOAD_TTL_MS = 30 * 60 * 1000;
/** How long an upload slot holds without being renewed (it is renewed every third of it). */
export const LEASE_MS = 60_000;

const STAGING_PREFIX = 'compplan-import-staging-';
/** A check's token: the instance's tag, a dot, 32 random bytes (base64url). */
const TOKEN = /^([0-9a-f]{8})\.[\w-]{43}$/;

export type UploadFormat = 'csv' | 'data-set';

/** What an upload is doing, for the page that shows its progress. */
export interface UploadProgress {
  phase: 'receiving' | 'checking' | 'importing';
  /** Bytes received, or read by the check or the import, of `total` (null: not known). */
  done: number;
  total: number | null;
  by: string;
  startedAt: string;
}

/** A checked file waiting for its Import. */
export interface StagedUpload {
  token: string;
  organizationId: string;
  userId: string;
  path: string;
  /** The name the browser gave (NDJSON is told from JSON by it, as on the command line). */
  name: string;
  format: UploadFormat;
  /** For CSV: the merit cycle the employees are loaded into. */
  cycleId?: string;
  /** For CSV: how the file writes dates and amounts, its encoding (sheet-reading.ts). */
  reading?: Partial<ReadingChoices>;
  /** For an Excel workbook: the sheet read (absent: the first visible one). */
  sheet?: string;
  size: number;
  checked: CheckedImport;
  /** For CSV: what the check read the file as ("separator ';'", "dates DD/MM/YYYY", …). */
  readAs?: readonly string[];
  /** Without pruning the import is refused (the reason), when pruning removes employees. */
  pruneRequired?: string;
  expiresAt: number;
}

/** An upload is already running for the organisation. */
export class UploadBusyError extends Error {
  override name = 'UploadBusyError';
  constructor(readonly running: UploadProgress) {
    super('an upload is running for this organisation');
  }
}

export class UploadStaging {
  private directory: Promise<string> | undefined;
  private readonly staged = new Map<string, StagedUpload>();
  /** This instance's running uploads, by organisation (their slots are in the database). */
  private readonly running = new Map<string, UploadProgress>();
  private sweeper: NodeJS.Timeout | undefined;
  private readonly instance = randomUUID();
  /** The instance's tag in its checks' tokens. */
  private readonly tag = this.instance.slice(0, 8);
  private readonly host = hostname();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly leaseMs = LEASE_MS,
  ) {}

  /** The staging directory, made (owner-only) at the first upload. */
  private async dir(): Promise<string> {
    this.directory ??= mkdtemp(join(tmpdir(), `${STAGING_PREFIX}${process.pid}-`));
    return this.directory;
  }

  /**
   * At start: the staging directories of this host's processes that are gone (a killed
   * instance's) are removed, files and all.
   */
  async reclaim(): Promise<void> {
    const names = await readdir(tmpdir()).catch(() => [] as string[]);
    for (const name of names) {
      const pid = Number(/^compplan-import-staging-(\d+)-/.exec(name)?.[1]);
      if (Number.isInteger(pid) && !processAlive(pid)) {
        await rm(join(tmpdir(), name), { recursive: true, force: true });
      }
    }
  }

  /**
   * A new file's path in the staging area (the file is not made), and its token: this
   * instance's tag, a dot, 32 random bytes. The tag tells a check kept by another
   * instance (or by this one before it restarted) from one that has expired.
   */
  async newPath(): Promise<{ token: string; path: string }> {
    const token = `${this.tag}.${randomBytes(32).toString('base64url')}`;
    return { token, path: join(await this.dir(), token) };
  }

  /** Whether a token is of a check made by another instance (or before a restart). */
  madeElsewhere(token: string): boolean {
    const match = TOKEN.exec(token);
    return match !== null && match[1] !== this.tag;
  }

  /**
   * Runs `work` as the organisation's one running upload, its progress shown by
   * `progress`; refused with UploadBusyError while another runs, on any instance. The slot
   * is freed when `work` ends, however it ends.
   */
  async exclusive<T>(
    organizationId: string,
    start: Omit<UploadProgress, 'startedAt' | 'done'>,
    work: (progress: UploadProgress) => Promise<T>,
  ): Promise<T> {
    const progress: UploadProgress = { ...start, done: 0, startedAt: new Date().toISOString() };
    await this.take(organizationId, progress);
    this.running.set(organizationId, progress);
    const renewal = setInterval(
      () => void this.renew(organizationId, progress).catch(() => undefined),
      Math.max(1, Math.floor(this.leaseMs / 3)),
    );
    renewal.unref();
    try {
      return await work(progress);
    } finally {
      clearInterval(renewal);
      this.running.delete(organizationId);
      await this.db
        .deleteFrom('upload_slots')
        .where('organization_id', '=', organizationId)
        .where('instance_id', '=', this.instance)
        .execute();
    }
  }

  /** The organisation's slot, taken; a slot whose holder is gone is taken over. */
  private async take(organizationId: string, progress: UploadProgress): Promise<void> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const now = Date.now();
      const inserted = await this.db
        .insertInto('upload_slots')
        .values({
          organization_id: organizationId,
          instance_id: this.instance,
          host: this.host,
          pid: process.pid,
          phase: progress.phase,
          done: progress.done,
          total: progress.total,
          started_by: progress.by,
          started_at: Date.parse(progress.startedAt),
          expires_at: now + this.leaseMs,
        })
        .onConflict((conflict) => conflict.column('organization_id').doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1) return;
      const held = await this.slotOf(organizationId);
      if (!held) continue;
      if (!this.abandoned(held, now)) throw new UploadBusyError(progressOfSlot(held));
      // The holder is gone: its slot is deleted (unless it was renewed meanwhile), and the
      // files of this host's processes that are gone with it (a killed instance's).
      await this.db
        .deleteFrom('upload_slots')
        .where('organization_id', '=', organizationId)
        .where('instance_id', '=', held.instance_id)
        .where('expires_at', '=', held.expires_at)
        .execute();
      if (held.host === this.host) await this.reclaim();
    }
    const held = await this.slotOf(organizationId);
    throw new UploadBusyError(held ? progressOfSlot(held) : progress);
  }

  private slotOf(organizationId: string) {
    return this.db
      .selectFrom('upload_slots')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .executeTakeFirst();
  }

  /** Expired, or held by a process of this host that is gone. */
  private abandoned(slot: Slot, now: number): boolean {
    if (Number(slot.expires_at) <= now) return true;
    return slot.instance_id !== this.instance && slot.host === this.host && !processAlive(slot.pid);
  }

  private async renew(organizationId: string, progress: UploadProgress): Promise<void> {
    await this.db
      .updateTable('upload_slots')
      .set({
        phase: progress.phase,
        done: progress.done,
        total: progress.total,
        expires_at: Date.now() + this.leaseMs,
      })
      .where('organization_id', '=', organizationId)
      .where('instance_id', '=', this.instance)
      .execute();
  }

  /** What the organisation's running upload is doing, on whichever instance it runs. */
  async progressOf(organizationId: string): Promise<UploadProgress | undefined> {
    const here = this.running.get(organizationId);
    if (here) return here;
    const slot = await this.slotOf(organizationId);
    return slot && !this.abandoned(slot, Date.now()) ? progressOfSlot(slot) : undefined;
  }

  /**
   * Keeps the whole list of a refused file's problems (CSV) for its user to download, in
   * the database, so that every instance serves it (migration 0019); replaces the user's
   * earlier list, and drops every list that has expired.
   */
  async keepProblems(userId: string, csv: string): Promise<void> {
    const now = Date.now();
    await this.db.deleteFrom('upload_problems').where('expires_at', '<=', now).execute();
    await this.db
      .insertInto('upload_problems')
      .values({ user_id: userId, csv, expires_at: now + UPLOAD_TTL_MS })
      .onConflict((conflict) =>
        conflict.column('user_id').doUpdateSet({ csv, expires_at: now + UPLOAD_TTL_MS }),
      )
      .execute();
  }

  /** The user's last refused file's problems, as CSV, unless expired. */
  async problemsOf(userId: string): Promise<string | undefined> {
    const kept = await this.db
      .selectFrom('upload_problems')
      .select('csv')
      .where('user_id', '=', userId)
      .where('expires_at', '>', Date.now())
      .executeTakeFirst();
    return kept?.csv;
  }

  /** Keeps a checked file for its Import; the user's earlier one, if any, is removed. */
  async keep(upload: Omit<StagedUpload, 'expiresAt'>): Promise<void> {
    for (const earlier of [...this.staged.values()]) {
      if (earlier.userId === upload.userId) await this.discard(earlier.token);
    }
    this.staged.set(upload.token, { ...upload, expiresAt: Date.now() + UPLOAD_TTL_MS });
    this.sweeper ??= setInterval(() => void this.sweep(), 60_000).unref();
  }

  /** The checked file of this token, if it is the organisation's and has not expired. */
  find(token: string, organizationId: string): StagedUpload | undefined {
    const upload = this.staged.get(token);
    if (!upload || upload.organizationId !== organizationId) return undefined;
    return upload.expiresAt > Date.now() ? upload : undefined;
  }

  /** Removes a checked file (imported, replaced, expired). */
  async discard(token: string): Promise<void> {
    const upload = this.staged.get(token);
    this.staged.delete(token);
    if (upload) await removeFile(upload.path);
  }

  private async sweep(): Promise<void> {
    const now = Date.now();
    for (const upload of [...this.staged.values()]) {
      if (upload.expiresAt <= now) await this.discard(upload.token);
    }
  }

  /** At shutdown: every staged file goes, and the directory. */
  async close(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    this.staged.clear();
    const directory = this.directory;
    this.directory = undefined;
    if (directory) await rm(await directory, { recursive: true, force: true });
  }
}

type Slot = Selectable<UploadSlotsTable>;

function progressOfSlot(slot: Slot): UploadProgress {
  return {
    phase: slot.phase as UploadProgress['phase'],
    done: Number(slot.done),
    total: slot.total === null ? null : Number(slot.total),
    by: slot.started_by,
    startedAt: new Date(Number(slot.started_at)).toISOString(),
  };
}

/** Whether a process of this host runs (EPERM: it does, as another user's). */
function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export async function removeFile(path: string): Promise<void> {
  await rm(path, { force: true });
}
