// The response serializer (src/http/serializer.ts): compiled from the routes' zod response
// schemas with fast-json-stringify. It must write what JSON.stringify would for a valid
// answer, and never more than the schema declares.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { toIso } from '../../src/db/values.js';
import { ErrorBody } from '../../src/http/schemas.js';
import { compiledSerializer } from '../../src/http/serializer.js';
import { EmployeePage } from '../../src/modules/employees/schema.js';
import { MeritCyclePage } from '../../src/modules/merit-cycles/schema.js';

const serializerOf = (schema: z.ZodType) =>
  compiledSerializer({ schema, method: 'GET', url: '/test', httpStatus: '200' });

const cycle = {
  id: 'mc_1b4e28ba-2fa1-41d2-883f-0016d3cca427',
  name: 'Merit 2025 — “Q1”',
  startDate: '2025-01-01T00:00:00.000Z',
  endDate: '2025-03-31T00:00:00.000Z',
  createdDate: '2024-12-01T09:30:00.000Z',
  status: 'active',
};

describe('compiled response serialization', () => {
  it('writes exactly JSON.stringify of a valid page of merit cycles', () => {
    const page = { data: [cycle, { ...cycle, name: 'a\u0000b\\"c' }], nextCursor: null };
    expect(serializerOf(MeritCyclePage)(page)).toBe(JSON.stringify(page));
  });

  it('writes any JSON value of an employee column as JSON.stringify does', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.string(), (value, name) => {
        const employee = {
          id: 'mce_9a1f0c52-7d1e-4c0b-a6f3-2b8e5d4c3a10',
          email: 'ada@example.com',
          firstName: name,
          lastName: 'Lovelace',
          preferredName: null,
          currencyCode: { code: 'GBP', value: 'British Pound' },
          eligibilityStatus: 'eligible',
          columns: { extra: { name: 'Extra', type: 'other', value } },
        };
        const page = { data: [employee], nextCursor: 'abc' };
        // fc.jsonValue() may hold -0, which JSON writes as 0 either way.
        expect(JSON.parse(serializerOf(EmployeePage)(page))).toEqual(
          JSON.parse(JSON.stringify(page)),
        );
      }),
      { numRuns: 200 },
    );
  });

  it('leaves out properties the schema does not declare, such as a row’s organisation id', () => {
    const row = { ...cycle, organization_id: 'org_secret', exchange_rates: '{"EUR":1}' };
    expect(JSON.parse(serializerOf(MeritCyclePage)({ data: [row], nextCursor: null }))).toEqual({
      data: [cycle],
      nextCursor: null,
    });
  });

  it('refuses an answer that lacks a required property, rather than send it incomplete', () => {
    expect(() => serializerOf(ErrorBody)({ path: '/x', message: 'no', statusCode: 400 })).toThrow(
      /timestamp/,
    );
  });
});

describe('stored timestamps (toIso)', () => {
  it('returns ISO text in the form toISOString writes as it is, and normalises any other', () => {
    expect(toIso('2025-01-02T03:04:05.678Z')).toBe('2025-01-02T03:04:05.678Z');
    expect(toIso('2025-01-02T04:04:05+01:00')).toBe('2025-01-02T03:04:05.000Z');
    expect(toIso(new Date(Date.UTC(2025, 0, 2)))).toBe('2025-01-02T00:00:00.000Z');
  });
});
