// The OpenAPI 3.1 document, built by @fastify/swagger from the zod schemas the routes
// validate and serialize with (fastify-type-provider-zod turns them into JSON Schema; the
// schemas' `.meta({ id })` makes them components referenced with $ref). Served at
// /openapi.json without a key; `npm run docs:export` writes it to the committed
// openapi.json, and a test fails when the two differ.
//
// What the routes cannot say themselves is added here, once for every operation: the
// x-api-key scheme; the responses of the HTTP layer on every path (400, 405, 408, 414, 431,
// 500) and of the authenticated scope (304, 401, 429, 503, 504); the response headers
// (x-request-id, the rate-limit fields, ETag, Retry-After, Allow); If-None-Match; and
// examples.
import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import type { OpenAPIV3_1 } from 'openapi-types';
import { API_KEY_HEADER } from '../http/authentication.js';
import { BOTH_CURSOR_AND_TOKEN, FULL_SYNC_NEEDED } from '../modules/deltas/walk.js';
import { FOREIGN_DELTA_TOKEN } from '../pagination/cursor.js';
import { packageVersion } from '../version.js';
import { WEBHOOKS_TAG, webhooksDocument } from '../webhooks/openapi.js';

export const OPENAPI_PATH = '/openapi.json';
export const DOCS_PREFIX = '/docs';

/** Routes that need no key: health checks for orchestrators. */
const PUBLIC_PATHS = new Set(['/healthz', '/readyz']);

const SECURITY_SCHEME = 'ApiKey';
/** The same key as the password of HTTP Basic, any user name (BI tools' credential dialogs). */
const BASIC_SCHEME = 'BasicWithApiKey';

type Document = OpenAPIV3_1.Document;
type Operation = OpenAPIV3_1.OperationObject;
type Responses = OpenAPIV3_1.ResponsesObject;
type Response = OpenAPIV3_1.ResponseObject;
type Reference = OpenAPIV3_1.ReferenceObject;

const ref = (kind: 'schemas' | 'responses' | 'headers', name: string): Reference => ({
  $ref: `#/components/${kind}/${name}`,
});

const EXAMPLE_TIMESTAMP = '2025-03-04T10:15:30.000Z';
const EXAMPLE_CYCLE_ID = 'mc_1b4e28ba-2fa1-41d2-883f-0016d3cca427';
const EXAMPLE_DELTA_TOKEN = 'eyJ2IjoxLCJzIjoidG9rZW46ZW1wbG95ZWVzRGVsdGEifQ.Xw3kP2aQ7Lm9cR1tUv5yZA';
const EXAMPLE_CURSOR = 'eyJsIjoibWMiLCJmIjp7fSwiYSI6WyIyMDI0LTExLTE1VDA5OjMwOjAwLjAwMFoiXX0.q8Jd0x';

const errorExample = (path: string, message: string, statusCode: number) => ({
  timestamp: EXAMPLE_TIMESTAMP,
  path,
  message,
  statusCode,
});

/** A 422 for an unknown query parameter, the one every route can meet. */
const unknownParameterExample = (path: string) => ({
  ...errorExample(path, 'Invalid query parameters: sort: Unrecognized parameter "sort"', 422),
  validationErrors: [
    { path: 'sort', message: 'Unrecognized parameter "sort"', code: 'unrecognized_keys' },
  ],
});

/** Response headers, each documented once and referenced by every response that sends it. */
const HEADERS: Record<string, OpenAPIV3_1.HeaderObject> = {
  RequestId: {
    description:
      'Identifies the request in the server logs; quote it when reporting a problem. An incoming x-request-id of 1–128 characters from [A-Za-z0-9_.:-] is kept, anything else is replaced by a UUID.',
    required: true,
    schema: { type: 'string', pattern: '^[\\w.:-]{1,128}$' },
    example: '5f0c3b1e-8a4f-4d0e-9a57-2c6b1f0e7d21',
  },
  RateLimitPolicy: {
    description:
      'The quota of the key (IETF draft-ietf-httpapi-ratelimit-headers-11): q requests per window of w seconds, over every endpoint together.',
    schema: { type: 'string', pattern: '^"default";q=\\d+;w=\\d+$' },
    example: '"default";q=10;w=1',
  },
  RateLimit: {
    description:
      'What is left of the quota: r requests remain until the window refreshes in t seconds.',
    schema: { type: 'string', pattern: '^"default";r=\\d+;t=\\d+$' },
    example: '"default";r=9;t=1',
  },
  XRateLimitLimit: {
    description: 'Requests per second the key may make.',
    schema: { type: 'integer', minimum: 1 },
    example: 10,
  },
  XRateLimitRemaining: {
    description: 'Requests left in the current one-second window.',
    schema: { type: 'integer', minimum: 0 },
    example: 9,
  },
  XRateLimitReset: {
    description: 'When the current window ends, in seconds since the Unix epoch.',
    schema: { type: 'integer', minimum: 0 },
    example: 1741083331,
  },
  RetryAfter: {
    description: 'Seconds to wait before trying again.',
    required: true,
    schema: { type: 'integer', minimum: 1 },
    example: 1,
  },
  ETag: {
    description:
      'A weak tag of the exact JSON text of the body. Send it back in If-None-Match: while the body is the same, the answer is 304 without a body, and that request does not count against the quota.',
    required: true,
    schema: { type: 'string', pattern: '^W/"[A-Za-z0-9_-]{22}"$' },
    example: 'W/"q3V0bUx1c2l2ZV9leGFtcA"',
  },
  Allow: {
    description: 'The methods the path answers: the API is read-only.',
    required: true,
    schema: { type: 'string', enum: ['GET, HEAD'] },
    example: 'GET, HEAD',
  },
};

const RATE_LIMIT_HEADERS = [
  ['RateLimit-Policy', 'RateLimitPolicy'],
  ['RateLimit', 'RateLimit'],
  ['X-RateLimit-Limit', 'XRateLimitLimit'],
  ['X-RateLimit-Remaining', 'XRateLimitRemaining'],
  ['X-RateLimit-Reset', 'XRateLimitReset'],
] as const;

/**
 * The headers of a response. The rate-limit fields come with every response to a request
 * whose key was accepted; they are `required` only where that is certain (a 200 or a 422
 * always passed authentication; a 404, 429 or 5xx may have been answered before it).
 */
function headersOf(
  options: { rateLimit: 'required' | 'optional' | 'none'; requestId?: 'optional' },
  extra: Record<string, OpenAPIV3_1.HeaderObject | Reference> = {},
): Record<string, OpenAPIV3_1.HeaderObject | Reference> {
  const headers: Record<string, OpenAPIV3_1.HeaderObject | Reference> = {
    // A request refused by Node's HTTP parser never became a request: it has no id.
    'X-Request-Id':
      options.requestId === 'optional'
        ? { ...HEADERS.RequestId, required: false }
        : ref('headers', 'RequestId'),
  };
  if (options.rateLimit !== 'none') {
    for (const [name, component] of RATE_LIMIT_HEADERS) {
      const header = HEADERS[component];
      headers[name] =
        options.rateLimit === 'required' && header
          ? { ...header, required: true }
          : ref('headers', component);
    }
  }
  return { ...headers, ...extra };
}

const errorContent = (schema: string, example: unknown) => ({
  'application/json': { schema: ref('schemas', schema), example },
});

/**
 * A request refused before it was routed or authenticated (by Node's HTTP parser or the
 * first hook): no rate-limit headers, and no request id when the parser refused it.
 */
const refusedEarly = (
  description: string,
  path: string,
  message: string,
  status: number,
): Response => ({
  description,
  headers: headersOf({ rateLimit: 'none', requestId: 'optional' }),
  content: errorContent('ErrorBody', errorExample(path, message, status)),
});

/** The responses every API route can give, whatever it does. */
const SHARED_RESPONSES: Record<string, Response> = {
  NotModified: {
    description:
      'If-None-Match named the ETag of the body this request would get: no body. The request is given back to the quota.',
    headers: headersOf({ rateLimit: 'optional' }, { ETag: ref('headers', 'ETag') }),
  },
  Unauthorized: {
    description:
      'The key (x-api-key, or the password of Basic credentials) is missing, malformed, unknown, expired or revoked (the message never says which).',
    headers: headersOf(
      { rateLimit: 'none' },
      {
        'WWW-Authenticate': {
          description: 'The challenge: the key may be sent as the password of HTTP Basic.',
          required: true,
          schema: { type: 'string', enum: ['Basic realm="compplan"'] },
        },
      },
    ),
    content: errorContent('ErrorBody', errorExample('/ping', 'Missing or invalid API key', 401)),
  },
  BadRequest: refusedEarly(
    'The request could not be read: a path with broken percent-encoding, an HTTP/1.1 request without a Host header, or a request line the server cannot parse.',
    '/v1/compensationPlanning/meritCycles/%E0%A4%A',
    'Malformed URL',
    400,
  ),
  RequestTimeout: refusedEarly(
    'The client did not send its headers within 10 seconds, or the whole request within 15; the connection is closed.',
    '/ping',
    'Request Timeout: the request was not received in time',
    408,
  ),
  UriTooLong: refusedEarly(
    'The URL is longer than 8 KiB (a cursor is at most 2,048 characters).',
    '/v1/compensationPlanning/meritCycles',
    'URI Too Long',
    414,
  ),
  RequestHeaderFieldsTooLarge: refusedEarly(
    'The request line and headers are larger than 16 KiB; the connection is closed.',
    '/ping',
    'Request Header Fields Too Large',
    431,
  ),
  MethodNotAllowed: {
    description: 'The API is read-only: any method other than GET or HEAD on this path.',
    headers: headersOf({ rateLimit: 'none' }, { Allow: ref('headers', 'Allow') }),
    content: errorContent(
      'ErrorBody',
      errorExample('/ping', 'Method POST is not allowed: this API is read-only (GET, HEAD)', 405),
    ),
  },
  TooManyRequests: {
    description:
      'The key has used its quota for this second (the rate-limit headers say when it refreshes), or this client address has failed authentication too often (20 times in 10 seconds). Wait Retry-After seconds.',
    headers: headersOf({ rateLimit: 'optional' }, { 'Retry-After': ref('headers', 'RetryAfter') }),
    content: errorContent('RateLimitBody', { message: 'Too Many Requests', statusCode: 429 }),
  },
  InternalServerError: {
    description:
      'An unexpected server error. The body says nothing more; the cause is logged under the x-request-id of the response.',
    headers: headersOf({ rateLimit: 'optional' }),
    content: errorContent(
      'ErrorBody',
      errorExample('/v1/compensationPlanning/meritCycles', 'Internal Server Error', 500),
    ),
  },
  ServiceUnavailable: {
    description:
      'The database cannot be reached. Safe to retry after Retry-After seconds; the service recovers by itself when the database does.',
    headers: headersOf({ rateLimit: 'optional' }, { 'Retry-After': ref('headers', 'RetryAfter') }),
    content: errorContent(
      'ErrorBody',
      errorExample(
        '/v1/compensationPlanning/meritCycles',
        'Service Unavailable: the database cannot be reached',
        503,
      ),
    ),
  },
  GatewayTimeout: {
    description:
      'The database did not answer in time (PostgreSQL statement timeout). Safe to retry after Retry-After seconds.',
    headers: headersOf({ rateLimit: 'optional' }, { 'Retry-After': ref('headers', 'RetryAfter') }),
    content: errorContent(
      'ErrorBody',
      errorExample(
        '/v1/compensationPlanning/meritCycles',
        'Gateway Timeout: the database did not answer in time',
        504,
      ),
    ),
  },
};

/** Examples of the bodies the routes declare, by operation and status. */
const EXAMPLE_CYCLE = {
  id: EXAMPLE_CYCLE_ID,
  name: '2025 Annual Merit',
  startDate: '2025-01-01T00:00:00.000Z',
  endDate: '2025-03-31T23:59:59.999Z',
  createdDate: '2024-11-15T09:30:00.000Z',
  status: 'active',
};

const EXAMPLE_EMPLOYEE = {
  id: 'mce_9a1f0c52-7d1e-4c0b-a6f3-2b8e5d4c3a10',
  email: 'ada@acme.example',
  firstName: 'Ada',
  lastName: 'Lovelace',
  preferredName: null,
  currencyCode: { code: 'GBP', value: 'British Pound' },
  eligibilityStatus: 'eligible',
  columns: {
    department: { name: 'Department', type: 'text', value: 'Engineering' },
    employee: {
      name: 'Employee',
      type: 'composite',
      value: { fullName: 'Ada Lovelace', jobLevel: 'L5', jobTitle: 'Staff Engineer' },
    },
  },
};

const EXAMPLES: Record<string, Record<string, unknown>> = {
  ping: { '200': { message: 'pong' }, '422': unknownParameterExample('/ping') },
  listMeritCycles: {
    '200': {
      data: [EXAMPLE_CYCLE],
      nextCursor: EXAMPLE_CURSOR,
    },
    '400': errorExample(
      '/v1/compensationPlanning/meritCycles',
      'nextCursor belongs to a different list',
      400,
    ),
    '422': {
      ...errorExample(
        '/v1/compensationPlanning/meritCycles',
        'Invalid query parameters: limit: must be at most 100',
        422,
      ),
      validationErrors: [{ path: 'limit', message: 'must be at most 100', code: 'too_big' }],
    },
  },
  getMeritCycle: {
    '200': EXAMPLE_CYCLE,
    '404': errorExample(
      `/v1/compensationPlanning/meritCycles/${EXAMPLE_CYCLE_ID}`,
      'Merit cycle not found',
      404,
    ),
    '422': unknownParameterExample(`/v1/compensationPlanning/meritCycles/${EXAMPLE_CYCLE_ID}`),
  },
  getMeritCycleExchangeRates: {
    '200': { base: 'USD', rates: { EUR: 0.92, GBP: 0.79 } },
    '404': errorExample(
      `/v1/compensationPlanning/meritCycles/${EXAMPLE_CYCLE_ID}/exchangeRates`,
      'Merit cycle not found',
      404,
    ),
    '422': unknownParameterExample(
      `/v1/compensationPlanning/meritCycles/${EXAMPLE_CYCLE_ID}/exchangeRates`,
    ),
  },
  listMeritCycleEmployees: {
    '200': {
      data: [EXAMPLE_EMPLOYEE],
      nextCursor: null,
    },
    '400': errorExample(
      `/v1/compensationPlanning/meritCycles/${EXAMPLE_CYCLE_ID}/employees`,
      'nextCursor belongs to a different list',
      400,
    ),
    '404': errorExample(
      `/v1/compensationPlanning/meritCycles/${EXAMPLE_CYCLE_ID}/employees`,
      'Merit cycle not found',
      404,
    ),
    '422': {
      ...errorExample(
        `/v1/compensationPlanning/meritCycles/${EXAMPLE_CYCLE_ID}/employees`,
        'Invalid query parameters: limit: must be at least 1',
        422,
      ),
      validationErrors: [{ path: 'limit', message: 'must be at least 1', code: 'too_small' }],
    },
  },
  meritCyclesDelta: {
    '200': {
      data: [
        { ...EXAMPLE_CYCLE, status: 'finalized' },
        { id: 'mc_7c9e6679-7425-40de-944b-e07fc1f90ae7', removed: true },
      ],
      nextCursor: null,
      deltaToken: EXAMPLE_DELTA_TOKEN,
    },
    '400': errorExample('/v1/compensationPlanning/meritCycles/delta', FOREIGN_DELTA_TOKEN, 400),
    '410': errorExample('/v1/compensationPlanning/meritCycles/delta', FULL_SYNC_NEEDED, 410),
    '422': unknownParameterExample('/v1/compensationPlanning/meritCycles/delta'),
  },
  meritCycleEmployeesDelta: {
    '200': {
      data: [
        {
          ...EXAMPLE_EMPLOYEE,
          columns: {
            ...EXAMPLE_EMPLOYEE.columns,
            department: { name: 'Department', type: 'text', value: 'Research' },
          },
        },
        { id: 'mce_3f2504e0-4f89-41d3-9a0c-0305e82c3301', removed: true },
      ],
      nextCursor: null,
      deltaToken: EXAMPLE_DELTA_TOKEN,
    },
    '400': errorExample(
      `/v1/compensationPlanning/meritCycles/${EXAMPLE_CYCLE_ID}/employees/delta`,
      BOTH_CURSOR_AND_TOKEN,
      400,
    ),
    '404': errorExample(
      `/v1/compensationPlanning/meritCycles/${EXAMPLE_CYCLE_ID}/employees/delta`,
      'Merit cycle not found',
      404,
    ),
    '410': errorExample(
      `/v1/compensationPlanning/meritCycles/${EXAMPLE_CYCLE_ID}/employees/delta`,
      FULL_SYNC_NEEDED,
      410,
    ),
    '422': unknownParameterExample(
      `/v1/compensationPlanning/meritCycles/${EXAMPLE_CYCLE_ID}/employees/delta`,
    ),
  },
  healthz: { '200': { status: 'ok' } },
  readyz: {
    '200': { status: 'ready', database: 'up', rateLimitStore: 'local' },
    '503': { status: 'unavailable', database: 'down', rateLimitStore: 'local' },
  },
};

/** Adds what every operation shares to the document the routes produced. */
function completeDocument(document: Document): Document {
  const components = document.components ?? {};
  components.responses = { ...components.responses, ...SHARED_RESPONSES };
  components.headers = { ...components.headers, ...HEADERS };
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    // A route that answers GET and HEAD itself is documented once, as GET.
    if (item) delete item.head;
    const operation = item?.get as Operation | undefined;
    if (!operation) continue;
    const isPublic = PUBLIC_PATHS.has(path);
    if (isPublic) operation.security = [];
    else operation.parameters = [...(operation.parameters ?? []), IF_NONE_MATCH];
    operation.responses = completeResponses(operation, isPublic);
  }
  // openapi-types describes a 3.1 path item with 3.0 parts: the object is 3.1 throughout.
  const webhooks = webhooksDocument() as Document['webhooks'] & object;
  return withoutUnusedSchemas({ ...document, components, webhooks });
}

/**
 * zod registers every schema with an id both as an input and as an output schema
 * (`…Input`); only those the operations reference, directly or through other schemas,
 * belong in the document.
 */
function withoutUnusedSchemas(document: Document): Document {
  const schemas = document.components?.schemas ?? {};
  const used = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item);
    } else if (value !== null && typeof value === 'object') {
      for (const [key, child] of Object.entries(value)) {
        if (key === '$ref' && typeof child === 'string') {
          const name = /^#\/components\/schemas\/(.+)$/.exec(child)?.[1];
          if (name !== undefined && !used.has(name)) {
            used.add(name);
            visit(schemas[name]);
          }
        } else visit(child);
      }
    }
  };
  const { schemas: _all, ...otherComponents } = document.components ?? {};
  visit({ ...document, components: otherComponents });
  const kept = Object.fromEntries(Object.entries(schemas).filter(([name]) => used.has(name)));
  return { ...document, components: { ...otherComponents, schemas: kept } };
}

/** Conditional GET: every 200 of the API carries an ETag (src/http/etag.ts). */
const IF_NONE_MATCH: OpenAPIV3_1.ParameterObject = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  description:
    'The ETag of a body you hold: while it is still the body, the answer is 304 without one, and the request does not count against the quota.',
  // No example: the docs page would send it with every try-it-out.
  schema: { type: 'string' },
};

/** What each status means, where the route schema gives no description. */
const STATUS_DESCRIPTIONS: Record<string, string> = {
  '200': 'Success.',
  '400':
    'Bad request: a nextCursor or deltaToken that does not verify, belongs to another list, delta or filters, or both together; a path with broken percent-encoding; no Host header.',
  '404':
    'No merit cycle with this id is visible to this key (an unknown id, one of another organisation or one of the wrong shape: the same answer).',
  '422': 'Invalid query parameters (including unknown ones), each listed in validationErrors.',
  '503': 'Not ready: the database does not answer.',
};

function completeResponses(operation: Operation, isPublic: boolean): Responses {
  const declared = operation.responses ?? {};
  const examples = EXAMPLES[operation.operationId ?? ''] ?? {};
  const responses: Responses = {};
  for (const [status, response] of Object.entries(declared)) {
    if ('$ref' in response) {
      responses[status] = response;
      continue;
    }
    // Shared errors are described once, in components.responses.
    if (!isPublic && status === '401') continue;
    if (!isPublic && status === '429') continue;
    const json = response.content?.['application/json'];
    const example = examples[status];
    if (json && example !== undefined) json.example = example;
    const rateLimit = isPublic
      ? 'none'
      : status === '200' || status === '422'
        ? 'required'
        : 'optional';
    // A 400 may also come from the HTTP layer (see BadRequest): described here in full.
    const description =
      status === '400' || !response.description || response.description === 'Default Response'
        ? (STATUS_DESCRIPTIONS[status] ?? response.description)
        : response.description;
    const requestId = status === '400' ? 'optional' : undefined;
    const etag: Record<string, Reference> =
      !isPublic && status === '200' ? { ETag: ref('headers', 'ETag') } : {};
    responses[status] = {
      ...response,
      description,
      headers: headersOf({ rateLimit, ...(requestId ? { requestId } : {}) }, etag),
    };
  }
  // What the HTTP layer answers before any route runs, on every path.
  if (!responses['400']) responses['400'] = ref('responses', 'BadRequest');
  responses['408'] = ref('responses', 'RequestTimeout');
  responses['414'] = ref('responses', 'UriTooLong');
  responses['431'] = ref('responses', 'RequestHeaderFieldsTooLarge');
  if (!isPublic) {
    responses['304'] = ref('responses', 'NotModified');
    responses['401'] = ref('responses', 'Unauthorized');
    responses['429'] = ref('responses', 'TooManyRequests');
  }
  responses['405'] = ref('responses', 'MethodNotAllowed');
  responses['500'] = ref('responses', 'InternalServerError');
  if (!isPublic) {
    responses['503'] = ref('responses', 'ServiceUnavailable');
    responses['504'] = ref('responses', 'GatewayTimeout');
  }
  return Object.fromEntries(
    Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)),
  ) as Responses;
}

export const API_DESCRIPTION = `Read-only programmatic access to compensation planning data — merit cycles, the employees of a merit cycle and a merit cycle's exchange rates — for analytics, HRIS and BI tools.

**Authentication.** Every endpoint except the health checks needs an API key: in the \`x-api-key\` header, or as the password of HTTP Basic authentication with any user name (what BI tools offer). Never in the URL. A missing or invalid key gets 401 with \`WWW-Authenticate: Basic realm="compplan"\`.

**BI tools.** Excel, Power BI and Tableau connect without code to the OData v4 feed at \`/odata/v4/\` (Basic authentication: any user name, the key as password): merit cycles, employees with every column as a typed column, and exchange rates, paged by the server (docs/bi-tools.md, docs/odata.md).

**Pagination.** Lists answer \`{ "data": [...], "nextCursor": "…" | null }\`. Pass \`nextCursor\` back unchanged (with \`limit\` if wanted) until it is null. \`limit\` is 1–100, default 25.

**Delta sync.** \`/meritCycles/delta\` and \`/meritCycles/{meritCycleId}/employees/delta\` page like lists, with a \`deltaToken\` on the last page: pass it back later to get only what was created, changed or removed since (removed items as \`{ "id", "removed": true }\`). A token older than the retention of removals (30 days by default) gets 410: sync in full again.

**Rate limit.** 10 requests per second per key over every endpoint together. Every authenticated response carries \`RateLimit-Policy\`, \`RateLimit\` and \`X-RateLimit-*\`; over the limit the answer is 429 with \`Retry-After\` (seconds).

**Errors.** \`{ timestamp, path, message, statusCode }\`, plus \`validationErrors\` (\`{ path, message, code }\`) on 422. Unknown query parameters are 422 \`unrecognized_keys\`.`;

export default fp(
  async (app: FastifyInstance) => {
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'compplan — Compensation Planning External API',
          version: packageVersion(),
          description: API_DESCRIPTION,
          contact: { name: 'compplan' },
          // No licence: compplan is not published under one (package.json says
          // UNLICENSED, which is no licence name a reader could look up).
        },
        servers: [{ url: 'http://localhost:3000', description: 'A local server (npm start)' }],
        tags: [
          { name: 'Ping', description: 'Connectivity and key check.' },
          { name: 'Merit cycles', description: 'Merit cycles and their exchange rates.' },
          { name: 'Merit cycle employees', description: 'The employees of a merit cycle.' },
          {
            name: 'Delta sync',
            description:
              'What changed since the last sync: a full walk once, then only changes (docs/delta-sync.md).',
          },
          { name: 'Operations', description: 'Health checks for load balancers; no key.' },
          {
            name: 'OData feed',
            description:
              'The same data as an OData v4 feed at `/odata/v4/` for BI tools (Excel, Power BI, Tableau): the service document, `$metadata` (CSDL XML or JSON), the entity sets `MeritCycles`, `Employees` (every column as a typed property) and `ExchangeRates`, `$select`, `$filter`, `$top`, `$skip`, `$count`, `$orderby` and server-driven paging. Its resources are described by its own `$metadata` rather than here, and its errors use the OData error body `{ "error": { "code", "message" } }`. The key goes in `x-api-key` or as the Basic password. Connecting each tool: docs/bi-tools.md; the feed: docs/odata.md.',
          },
          WEBHOOKS_TAG,
        ],
        // Either scheme: a list of two requirements, each enough alone.
        security: [{ [SECURITY_SCHEME]: [] }, { [BASIC_SCHEME]: [] }],
        components: {
          securitySchemes: {
            [SECURITY_SCHEME]: {
              type: 'apiKey',
              in: 'header',
              name: API_KEY_HEADER,
              description:
                'An API key, generated with `compplan keys create --org SLUG` (Settings → Connections → Generate API Key). Shown once, at creation.',
            },
            [BASIC_SCHEME]: {
              type: 'http',
              scheme: 'basic',
              description:
                'The same API key as the password of HTTP Basic authentication, with any user name (what Excel, Power BI and Tableau offer for a feed: docs/bi-tools.md). x-api-key is read first when both are sent. Every 401 carries `WWW-Authenticate: Basic realm="compplan"`. Keys are never read from the URL.',
            },
          },
        },
      },
      // Only the API's GET operations are documented: HEAD mirrors GET, the 405 answers of
      // other methods are documented on each GET operation, and the document and docs page
      // do not describe themselves. Routes without tags (the web application's pages) are
      // not part of the API.
      hideUntagged: true,
      transform: (input) => {
        const methods = [input.route.method].flat();
        if (
          !methods.includes('GET') ||
          input.url === OPENAPI_PATH ||
          input.url.startsWith(DOCS_PREFIX)
        ) {
          return { schema: { hide: true } as typeof input.schema, url: input.url };
        }
        return jsonSchemaTransform(input);
      },
      transformObject: (input) =>
        completeDocument(jsonSchemaTransformObject(input) as unknown as Document) as never,
    });

    app.get(OPENAPI_PATH, { schema: { hide: true } }, async (_request, reply) =>
      reply.type('application/json; charset=utf-8').send(app.swagger()),
    );
  },
  { name: 'openapi' },
);
