// The import's staging area for files uploaded in the web application (Settings → Data,
// docs/web-app.md). An upload is written here as it arrives — never held whole in memory,
// never anywhere else on the server's disk — then checked; the checked file waits here,
// under a random token, for the Import that applies exactly it, and is removed by that
// import, by a newer upload of the same user, after UPLOAD_TTL_MS, when the upload fails
// or is abandoned, and when the server stops. One upload (or import) at a time per
// organisation: a second one is refused while the first runs.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CheckedImport } from './load.js';

/** The largest file the web application takes (the CSV and JSON limits are lower). */
export const UPLOAD_MAX_BYTES = 100 * 1024 * 1024;
/** How long a checked file waits for its Import. */
export const UPLOAD_TTL_MS = 30 * 60 * 1000;

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
  size: number;
  checked: CheckedImport;
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
  private readonly running = new Map<string, UploadProgress>();
  private sweeper: NodeJS.Timeout | undefined;

  /** The staging directory, made (owner-only) at the first upload. */
  private async dir(): Promise<string> {
    this.directory ??= mkdtemp(join(tmpdir(), 'compplan-import-staging-'));
    return this.directory;
  }

  /** A new file's path in the staging area (the file is not made). */
  async newPath(): Promise<{ token: string; path: string }> {
    const token = randomBytes(32).toString('base64url');
    return { token, path: join(await this.dir(), token) };
  }

  /**
   * Runs `work` as the organisation's one running upload, its progress shown by
   * `progress`; refused with UploadBusyError while another runs.
   */
  async exclusive<T>(
    organizationId: string,
    start: Omit<UploadProgress, 'startedAt' | 'done'>,
    work: (progress: UploadProgress) => Promise<T>,
  ): Promise<T> {
    const current = this.running.get(organizationId);
    if (current) throw new UploadBusyError(current);
    const progress: UploadProgress = { ...start, done: 0, startedAt: new Date().toISOString() };
    this.running.set(organizationId, progress);
    try {
      return await work(progress);
    } finally {
      this.running.delete(organizationId);
    }
  }

  progressOf(organizationId: string): UploadProgress | undefined {
    return this.running.get(organizationId);
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

export async function removeFile(path: string): Promise<void> {
  await rm(path, { force: true });
}
