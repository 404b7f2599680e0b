// The contract check: a response must be one the committed OpenAPI document (openapi.json)
// declares — its status for the operation, every header it declares (required ones
// present, all of them matching their schema) and its body (JSON Schema 2020-12, as
// OpenAPI 3.1 uses). test/helpers/server.ts runs it on every response of the API suite,
// and test/docs/openapi.test.ts keeps openapi.json equal to what the app serves, so the
// document cannot drift from the behaviour.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS: its default export arrives wrapped under NodeNext.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

type Json = Record<string, unknown>;

const DOCUMENT_FILE = fileURLToPath(new URL('../../openapi.json', import.meta.url));
const DOCUMENT_ID = 'https://compplan.invalid/openapi.json';

/**
 * Paths the app serves that are not part of the API the document describes: the document
 * itself, the docs page and the web application (sign-in, Settings).
 */
const OUTSIDE_THE_API = [/^\/openapi\.json$/, /^\/docs(\/|$)/, /^\/app(\/|$)/];

let loaded: { document: Json; ajv: Ajv2020; routes: { pattern: RegExp; path: string }[] } | null =
  null;

function contract() {
  if (loaded) return loaded;
  const document = JSON.parse(readFileSync(DOCUMENT_FILE, 'utf8')) as Json;
  // OpenAPI's `example` is not a JSON Schema keyword; strict mode would refuse it.
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(document, DOCUMENT_ID);
  // Concrete paths before templated ones (OpenAPI 3.1, Paths Object): /meritCycles/delta
  // is not /meritCycles/{id}. Fewer templated segments first.
  const templated = (path: string) => path.match(/\{[^}]+\}/g)?.length ?? 0;
  const routes = Object.keys(document.paths as Json)
    .sort((a, b) => templated(a) - templated(b))
    .map((path) => ({
      path,
      pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
    }));
  loaded = { document, ajv, routes };
  return loaded;
}

/** What the HTTP layer answers before routing, on any path (components.responses). */
const HTTP_LAYER_STATUSES = [400, 408, 414, 431];

const escapePointer = (part: string) => part.replaceAll('~', '~0').replaceAll('/', '~1');

function at(document: Json, pointer: string): unknown {
  return pointer
    .replace(/^#\//, '')
    .split('/')
    .reduce<unknown>(
      (node, part) =>
        (node as Json | undefined)?.[part.replaceAll('~1', '/').replaceAll('~0', '~')],
      document,
    );
}

/** Follows a `$ref` (if any) to where the object really is; returns its pointer too. */
function resolve(document: Json, pointer: string): { pointer: string; node: Json | undefined } {
  let node = at(document, pointer) as Json | undefined;
  while (node && typeof node.$ref === 'string') {
    pointer = node.$ref;
    node = at(document, pointer) as Json | undefined;
  }
  return { pointer, node };
}

const validators = new Map<string, ValidateFunction>();
function validatorAt(pointer: string): ValidateFunction {
  let validate = validators.get(pointer);
  if (!validate) {
    validate = contract().ajv.compile({ $ref: `${DOCUMENT_ID}${pointer}` });
    validators.set(pointer, validate);
  }
  return validate;
}

function schemaErrors(pointer: string, value: unknown): string | null {
  const validate = validatorAt(pointer);
  if (validate(value)) return null;
  return (validate.errors ?? [])
    .map(
      (error) =>
        `${error.instancePath || '(root)'} ${error.message ?? ''} ${JSON.stringify(error.params)}`,
    )
    .join('; ');
}

/** A header's text as the JSON value its schema describes (integers are sent as text). */
function headerValue(text: string, schemaPointer: string): unknown {
  const { node } = resolve(contract().document, schemaPointer);
  return node?.type === 'integer' && /^-?\d+$/.test(text) ? Number(text) : text;
}

export interface ObservedResponse {
  method: string;
  /** The request target: path and query string. */
  target: string;
  status: number;
  headers: Headers;
  body: string;
}

/** The mismatches between a response and the document; empty when it conforms. */
export function contractViolations(response: ObservedResponse): string[] {
  const { document, routes } = contract();
  const path = new URL(response.target, 'http://x').pathname;
  if (OUTSIDE_THE_API.some((pattern) => pattern.test(path))) return [];
  const method = response.method.toUpperCase();
  const what = `${method} ${path} → ${response.status}`;
  const route = routes.find((candidate) => candidate.pattern.test(path));

  if (!route) {
    // A path the API does not have: 404 (or one of the HTTP layer's answers, which come
    // before routing, or the 403 of a key sent from outside its address allowlist) with
    // the standard error body.
    if (![404, 403, ...HTTP_LAYER_STATUSES].includes(response.status)) {
      return [`${what}: an undocumented path must answer 404`];
    }
    const problems: string[] = [];
    if (response.status === 404 && !response.headers.get('x-request-id')) {
      problems.push(`${what}: no x-request-id header`);
    }
    const body = parseJson(response.body);
    const errors = schemaErrors('#/components/schemas/ErrorBody', body);
    if (errors) problems.push(`${what}: body does not match ErrorBody: ${errors}`);
    return problems;
  }
  const operationPointer = `#/paths/${escapePointer(route.path)}/get`;
  // HEAD answers as GET does, without a body; any other method answers 405 (documented on
  // each GET operation).
  const isRead = method === 'GET' || method === 'HEAD';
  const declared = at(document, `${operationPointer}/responses`) as Json;
  const status = String(response.status);
  if (!isRead && status !== '405') return [`${what}: a method other than GET/HEAD must be 405`];
  if (!(status in declared)) {
    return [
      `${what}: status ${status} is not declared (declared: ${Object.keys(declared).join(', ')})`,
    ];
  }
  const responsePointer = resolve(document, `${operationPointer}/responses/${status}`).pointer;
  const problems: string[] = [];
  const declaredResponse = at(document, responsePointer) as Json;

  for (const name of Object.keys((declaredResponse.headers ?? {}) as Json)) {
    const headerPointer = resolve(
      document,
      `${responsePointer}/headers/${escapePointer(name)}`,
    ).pointer;
    const definition = at(document, headerPointer) as Json;
    const text = response.headers.get(name);
    if (text === null) {
      if (definition.required === true)
        problems.push(`${what}: required header ${name} is missing`);
      continue;
    }
    const errors = schemaErrors(
      `${headerPointer}/schema`,
      headerValue(text, `${headerPointer}/schema`),
    );
    if (errors) problems.push(`${what}: header ${name}: ${JSON.stringify(text)} ${errors}`);
  }

  const content = declaredResponse.content as Json | undefined;
  if (content && method !== 'HEAD') {
    const type = response.headers.get('content-type') ?? '';
    const mediaType = type.split(';')[0]?.trim() ?? '';
    const schemaPointer = `${responsePointer}/content/${escapePointer(mediaType)}/schema`;
    if (!(mediaType in content)) {
      problems.push(
        `${what}: content-type ${JSON.stringify(type)}, declared ${Object.keys(content).join(', ')}`,
      );
    } else if (mediaType === 'application/x-ndjson') {
      // Each line is one value of the schema (the bulk download).
      const lines = response.body.split('\n');
      if (lines.pop() !== '') problems.push(`${what}: NDJSON that does not end with a line end`);
      for (const [index, line] of lines.entries()) {
        const errors = schemaErrors(schemaPointer, parseJson(line));
        if (errors)
          problems.push(`${what}: line ${index + 1} does not match the document: ${errors}`);
      }
    } else {
      const body = mediaType === 'application/json' ? parseJson(response.body) : response.body;
      const errors = schemaErrors(schemaPointer, body);
      if (errors) problems.push(`${what}: body does not match the document: ${errors}`);
    }
  } else if (!content && method !== 'HEAD' && response.body !== '') {
    problems.push(`${what}: a body where the document declares none`);
  }
  return problems;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { '(not JSON)': text.slice(0, 200) };
  }
}

/** Throws, naming every mismatch, when the response is not one the document declares. */
export function assertConformsToContract(response: ObservedResponse): void {
  const problems = contractViolations(response);
  if (problems.length > 0) {
    throw new Error(`the response does not conform to openapi.json:\n${problems.join('\n')}`);
  }
}

/**
 * Why a webhook body (`{ type, timestamp, data }`) does not match what the document's
 * `webhooks` says of its type: an empty list when it does.
 */
export function webhookPayloadViolations(body: { type?: unknown }): string[] {
  const type = typeof body.type === 'string' ? body.type : '';
  const operation = at(contract().document, `#/webhooks/${escapePointer(type)}/post`);
  if (!operation) return [`the document has no webhook ${JSON.stringify(type)}`];
  const errors = schemaErrors(
    `#/webhooks/${escapePointer(type)}/post/requestBody/content/application~1json/schema`,
    body,
  );
  return errors ? [errors] : [];
}
