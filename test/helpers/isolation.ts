// What the isolation matrices (test/api/*isolation-matrix.test.ts) share: the endpoints
// that name a merit cycle, the forms an id can take, and the check that a request is
// refused exactly as for something that does not exist.
import { expect } from 'vitest';
import {
  columnsPath,
  cyclePath,
  employeesPath,
  ISO_UTC_MS,
  ratesPath,
} from './api-expectations.js';
import { nodeRequest } from './raw-http.js';

export const CYCLE_NOT_FOUND = 'Merit cycle not found';
export const INVALID_CURSOR =
  'nextCursor is not a valid cursor: pass back the nextCursor of a previous page, unchanged';
export const INVALID_DELTA_TOKEN =
  'deltaToken is not a valid delta token: pass back the deltaToken of the last page of a delta, unchanged';

/** Percent-encodes every character: the router decodes it back to the same id. */
export const fullyEncoded = (id: string) =>
  Array.from(id, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`).join('');

/** Every endpoint that names a merit cycle. */
export const CYCLE_ENDPOINTS: [string, (id: string) => string][] = [
  ['GET /meritCycles/{id}', cyclePath],
  ['GET /meritCycles/{id}/exchangeRates', ratesPath],
  ['GET /meritCycles/{id}/columns', columnsPath],
  ['GET /meritCycles/{id}/employees', employeesPath],
  ['GET /meritCycles/{id}/employees?limit=100', (id) => `${employeesPath(id)}?limit=100`],
  ['GET /meritCycles/{id}/employees/delta', (id) => `${employeesPath(id)}/delta`],
];

/** The forms in which a cycle id can be sent. */
export const ID_FORMS: [string, (id: string) => string][] = [
  ['as given', (id) => id],
  ['fully percent-encoded', fullyEncoded],
  ['upper-cased', (id) => id.toUpperCase()],
];

/** GET and HEAD of `target` with `key` are refused with `status` and the standard body. */
export async function expectRefused(
  serverUrl: string,
  key: string,
  target: string,
  status: 400 | 404,
  message: string,
): Promise<void> {
  for (const method of ['GET', 'HEAD']) {
    const response = await nodeRequest(serverUrl, target, {
      method,
      headers: { 'x-api-key': key },
    });
    const where = `${method} ${target}`;
    expect(response.status, where).toBe(status);
    expect(response.headers['content-type'], where).toBe('application/json; charset=utf-8');
    if (method === 'HEAD') {
      expect(response.body, where).toBe('');
      continue;
    }
    expect(JSON.parse(response.body), where).toEqual({
      timestamp: expect.stringMatching(ISO_UTC_MS),
      path: target.split('?')[0],
      message,
      statusCode: status,
    });
  }
}
