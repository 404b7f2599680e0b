// The state file of `compplan export … --delta FILE`: the deltaToken of the last delta
// export, and what it was of. Read before the export; written (atomically: a temporary
// file renamed over it) only after everything the export wrote is complete, so that a
// failed or interrupted run leaves the previous token, and running again exports the
// same changes again — applying a change twice is harmless; skipping one is not.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import { ExportError, type ExportKind } from './export.js';

const DeltaState = z.object({
  version: z.literal(1),
  kind: z.enum(['merit-cycles', 'employees']),
  cycle: z.string().optional(),
  deltaToken: z.string().min(1),
});
type DeltaState = z.infer<typeof DeltaState>;

export interface DeltaSubject {
  kind: ExportKind;
  cycle?: string;
}

const describe = (subject: DeltaSubject) =>
  subject.kind === 'employees' ? `the employees of ${subject.cycle}` : 'the merit cycles';

/** The deltaToken the state file holds for `subject`; undefined when there is no file yet. */
export function readDeltaToken(file: string, subject: DeltaSubject): string | undefined {
  if (!existsSync(file)) return undefined;
  let state: DeltaState;
  try {
    state = DeltaState.parse(JSON.parse(readFileSync(file, 'utf8')));
  } catch {
    throw new ExportError(
      `${file} is not a delta state file of compplan export: remove it to export everything again`,
    );
  }
  if (state.kind !== subject.kind || (state.cycle ?? undefined) !== subject.cycle) {
    throw new ExportError(
      `${file} holds the delta state of ${describe(state)}, not of ${describe(subject)}: use one state file for each`,
    );
  }
  return state.deltaToken;
}

/** Keeps `deltaToken` in the state file for the next run. */
export function writeDeltaToken(file: string, subject: DeltaSubject, deltaToken: string): void {
  const state: DeltaState = {
    version: 1,
    kind: subject.kind as DeltaState['kind'],
    ...(subject.cycle ? { cycle: subject.cycle } : {}),
    deltaToken,
  };
  writeFileSync(`${file}.tmp`, `${JSON.stringify(state, null, 2)}\n`);
  renameSync(`${file}.tmp`, file);
}
