// The query and envelope of the two delta endpoints (docs/delta-sync.md).
import { z } from 'zod';
import { limitParam, nextCursorParam } from '../../http/schemas.js';
import { Employee } from '../employees/schema.js';
import { MeritCycle } from '../merit-cycles/schema.js';

export const DeltaQuery = z.strictObject({
  limit: limitParam,
  nextCursor: nextCursorParam.describe(
    'The nextCursor of the previous page of this delta walk, unchanged.',
  ),
  deltaToken: z
    .string()
    .min(1)
    .optional()
    .describe(
      'The deltaToken of the last page of the previous walk: only what changed since. Absent: every current item (a full sync).',
    ),
});
export type DeltaQuery = z.infer<typeof DeltaQuery>;

export const RemovedItem = z
  .object({
    id: z.string(),
    removed: z.literal(true),
  })
  .meta({
    id: 'RemovedItem',
    description: 'An item removed since the deltaToken: delete it from the copy.',
  });
export type RemovedItem = z.infer<typeof RemovedItem>;

/** A page of a delta: changed items in full, removed ones as RemovedItem. */
function deltaPageOf<T extends z.ZodType>(item: T, id: string) {
  return z
    .object({
      data: z.array(z.xor([item, RemovedItem])),
      nextCursor: z
        .string()
        .nullable()
        .describe('Cursor of the next page of this walk; null on its last page.'),
      deltaToken: z
        .string()
        .nullable()
        .describe(
          'On the last page only (null before): keep it, and pass it as deltaToken to get what changes next.',
        ),
    })
    .meta({ id });
}

// Made once, here, as every schema with an id is: zod's global registry holds one schema per
// id, and the OpenAPI document of an app fails ("Duplicate schema id") when another app in
// the same process made a second schema of the same id.
export const MeritCycleDeltaPage = deltaPageOf(MeritCycle, 'MeritCycleDeltaPage');
export const EmployeeDeltaPage = deltaPageOf(Employee, 'MeritCycleEmployeeDeltaPage');
