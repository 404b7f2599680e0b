// Small helpers shared by the API tests: raw HTTP (to see encodings and exact headers),
// the shapes of error bodies, the documented orders, and page walks.
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { expect } from 'vitest';
import type { DataSetInput } from '../../src/import/schema.js';
import type { TestServer } from './server.js';

type EmployeeInput = NonNullable<DataSetInput['meritCycles'][number]['employees']>[number];

export const MERIT_CYCLES = '/v1/compensationPlanning/meritCycles';
export const JSON_TYPE = 'application/json; charset=utf-8';
/** ISO 8601 UTC with milliseconds, the only timestamp form the API sends. */
export const ISO_UTC_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

export const cyclePath = (id: string) => `${MERIT_CYCLES}/${id}`;
export const ratesPath = (id: string) => `${MERIT_CYCLES}/${id}/exchangeRates`;
export const employeesPath = (id: string) => `${MERIT_CYCLES}/${id}/employees`;
export const columnsPath = (id: string) => `${MERIT_CYCLES}/${id}/columns`;

/** The text with the character at `index` replaced by a different one: never the same text. */
export function withCharacterChanged(text: string, index: number): string {
  return `${text.slice(0, index)}${text[index] === 'A' ? 'B' : 'A'}${text.slice(index + 1)}`;
}

/** The key with its last character changed, so its checksum no longer matches — always a
 * different key (replacing the last character with a fixed one is the same key whenever
 * the key already ends in it: one key in 62). */
export function withWrongChecksum(key: string): string {
  return withCharacterChanged(key, key.length - 1);
}

export interface ValidationItem {
  path: string;
  message: string;
  code: string;
}

/** The standard error body (docs/api-behaviour.md, "Errors"), with any UTC-with-milliseconds timestamp. */
export function errorBody(
  path: string,
  message: string,
  statusCode: number,
  validationErrors?: ValidationItem[],
) {
  return {
    timestamp: expect.stringMatching(ISO_UTC_MS),
    path,
    message,
    statusCode,
    ...(validationErrors ? { validationErrors } : {}),
  };
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/**
 * One request through node:http, which (unlike fetch) neither adds accept-encoding nor
 * decodes the body, so the test sees exactly what the server sent.
 */
export function rawRequest(
  baseUrl: string,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<RawResponse> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path,
        method: options.method ?? 'GET',
        // With a body, its length: without it node:http frames a DELETE or OPTIONS body as
        // nothing at all, and the server would read it as the start of the next request.
        headers: {
          ...(options.body === undefined
            ? {}
            : { 'content-length': String(Buffer.byteLength(options.body)) }),
          ...options.headers,
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks),
          }),
        );
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(options.body);
  });
}

/** Compares two strings by Unicode code point (not by UTF-16 code unit, as `<` does). */
export function compareCodePoints(a: string, b: string): number {
  const left = Array.from(a, (char) => char.codePointAt(0) ?? 0);
  const right = Array.from(b, (char) => char.codePointAt(0) ?? 0);
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    const difference = (left[i] ?? 0) - (right[i] ?? 0);
    if (difference !== 0) return difference;
  }
  return left.length - right.length;
}

/** The documented employee order: lastName, firstName, id, each by code point. */
export function compareEmployees(
  a: { lastName: string; firstName: string; id?: string },
  b: { lastName: string; firstName: string; id?: string },
): number {
  return (
    compareCodePoints(a.lastName, b.lastName) ||
    compareCodePoints(a.firstName, b.firstName) ||
    compareCodePoints(a.id ?? '', b.id ?? '')
  );
}

/** The documented merit cycle order: newest createdDate first, ties by id ascending. */
export function compareMeritCycles(
  a: { createdDate: string; id: string },
  b: { createdDate: string; id: string },
): number {
  const byDate = Date.parse(b.createdDate) - Date.parse(a.createdDate);
  return byDate !== 0 ? byDate : compareCodePoints(a.id, b.id);
}

const currencyNames = new Intl.DisplayNames(['en'], { type: 'currency' });

/** An imported employee as the API must serve it (docs/api-behaviour.md, docs/import-format.md). */
export function expectedEmployee(input: EmployeeInput) {
  if (input.id === undefined) throw new Error('fixture employees need fixed ids');
  const currency =
    typeof input.currencyCode === 'string'
      ? { code: input.currencyCode, value: currencyNames.of(input.currencyCode) }
      : {
          code: input.currencyCode.code,
          value: input.currencyCode.value ?? currencyNames.of(input.currencyCode.code),
        };
  return {
    id: input.id,
    email: input.email,
    firstName: input.firstName,
    lastName: input.lastName,
    preferredName: input.preferredName ?? null,
    currencyCode: currency,
    eligibilityStatus: input.eligibilityStatus,
    columns: input.columns,
  };
}

export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

export interface Walk<T> {
  pages: Page<T>[];
  items: T[];
}

/**
 * Follows nextCursor from `firstQuery` to the last page, sending only nextCursor and
 * `limit` after the first request (plus `repeatQuery` when given). Every page must be 200.
 */
export async function walkPages<T>(
  server: TestServer,
  key: string,
  path: string,
  options: { limit: number; firstQuery?: string; repeatQuery?: string; maxPages?: number },
): Promise<Walk<T>> {
  const pages: Page<T>[] = [];
  const extra = (query: string | undefined) => (query ? `&${query}` : '');
  let url = `${path}?limit=${options.limit}${extra(options.firstQuery)}`;
  for (let i = 0; i < (options.maxPages ?? 1_000); i++) {
    const response = await server.request(url, { key });
    if (response.status !== 200) {
      throw new Error(`page ${i + 1} of ${path}: ${response.status} ${await response.text()}`);
    }
    const page = (await response.json()) as Page<T>;
    pages.push(page);
    if (page.nextCursor === null) return { pages, items: pages.flatMap((p) => p.data) };
    url = `${path}?limit=${options.limit}&nextCursor=${encodeURIComponent(page.nextCursor)}${extra(options.repeatQuery)}`;
  }
  throw new Error(`${path}: no last page after ${options.maxPages ?? 1_000} pages`);
}

/** GET with a key, parsed as JSON. */
export async function getJson(server: TestServer, path: string, key: string) {
  const response = await server.request(path, { key });
  return { status: response.status, headers: response.headers, body: await response.json() };
}
