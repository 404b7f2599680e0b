// Response serialization compiled from the routes' response schemas. fastify-type-provider-
// zod's own serializer checks every response against its zod schema and then calls
// JSON.stringify: a full validation of each answer, on the hot path. Here each response
// schema becomes JSON Schema once (the same conversion the OpenAPI document shows) and
// fast-json-stringify compiles it into a function that writes exactly the declared
// properties. The API tests check every answer against the OpenAPI document instead.
import fastJsonStringify from 'fast-json-stringify';
import type { FastifySerializerCompiler } from 'fastify/types/schema.js';
import { z } from 'zod';

export const compiledSerializer: FastifySerializerCompiler<z.ZodType> = ({ schema }) =>
  fastJsonStringify(
    z.toJSONSchema(schema, {
      target: 'draft-07',
      io: 'output',
      // z.unknown() (a column's value) becomes {}: any JSON value, written by JSON.stringify.
      unrepresentable: 'any',
    }) as Parameters<typeof fastJsonStringify>[0],
  );
