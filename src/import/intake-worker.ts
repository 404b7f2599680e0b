// The worker thread of a file's import (parallel-intake.ts): the file's bytes come in as
// it asks for them, are decoded, parsed (NDJSON or JSON, source.ts) and validated record by
// record (intake.ts); batches of staging rows go out, at most BATCHES_AHEAD of them not
// yet written; the outcome goes out last. No database here.
import { parentPort, workerData } from 'node:worker_threads';
import { takeRecords } from './intake.js';
import {
  BATCHES_AHEAD,
  CHUNKS_AHEAD,
  type FromWorker,
  type IntakeWorkerData,
  sentError,
  type ToWorker,
} from './parallel-intake.js';
import { decodeUtf8, recordsOfStream } from './source.js';
import type { StagedBatch } from './staging.js';

if (!parentPort) throw new Error('intake-worker.js runs as a worker thread');
const port = parentPort;
const { name, dialect } = workerData as IntakeWorkerData;
const post = (message: FromWorker) => port.postMessage(message);

/** Wakes whoever waits for the next message (one waiter at a time: one async reader). */
let wake: (() => void) | undefined;
const arrived = () => new Promise<void>((resolve) => (wake = resolve));

const chunks: (Uint8Array | null)[] = [];
let credits = BATCHES_AHEAD;
port.on('message', (message: ToWorker) => {
  if (message.type === 'staged') credits++;
  else chunks.push(message.type === 'chunk' ? message.bytes : null);
  const waiting = wake;
  wake = undefined;
  waiting?.();
});

/** The file's bytes, asked for CHUNKS_AHEAD chunks ahead of the parser. */
async function* bytes(): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < CHUNKS_AHEAD; i++) post({ type: 'pull' });
  for (;;) {
    while (chunks.length === 0) await arrived();
    const chunk = chunks.shift() as Uint8Array | null;
    if (chunk === null) return;
    post({ type: 'pull' });
    yield chunk;
  }
}

async function stage(batch: StagedBatch): Promise<void> {
  while (credits === 0) await arrived();
  credits--;
  post({ type: 'batch', batch });
}

try {
  const records = await recordsOfStream(name, decodeUtf8(bytes()));
  post({ type: 'done', outcome: await takeRecords(records, dialect, stage) });
} catch (error) {
  post({ type: 'failed', error: sentError(error) });
}
