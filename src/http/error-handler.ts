// Every error, from any layer, leaves as the body docs/api-behaviour.md defines ("Errors").
// Clients see a message meant for them; a 5xx says only what kind of failure it was, and
// the cause goes to the log under the request id that the client also gets in x-request-id.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { classifyDatabaseError } from '../db/errors.js';
import { ApiError, type ValidationIssue } from '../errors.js';
import { isFeedRequest, odataErrorBody } from './odata-errors.js';

export interface ErrorBody {
  timestamp: string;
  path: string;
  message: string;
  statusCode: number;
  validationErrors?: ValidationIssue[];
}

export function requestPath(request: FastifyRequest): string {
  const url = request.raw.url ?? request.url;
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

export function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  statusCode: number,
  message: string,
  validationErrors?: readonly ValidationIssue[],
) {
  // The OData feed answers its errors in OData's form (docs/odata.md, "Errors").
  if (isFeedRequest(request)) {
    return reply
      .code(statusCode)
      .type('application/json; charset=utf-8')
      .send(odataErrorBody(statusCode, message));
  }
  const body: ErrorBody = {
    timestamp: new Date().toISOString(),
    path: requestPath(request),
    message,
    statusCode,
  };
  if (validationErrors) body.validationErrors = [...validationErrors];
  return reply.code(statusCode).type('application/json; charset=utf-8').send(body);
}

interface ZodIssueLike {
  keyword: string;
  instancePath: string;
  message?: string;
  params?: { keys?: unknown };
}

/** zod's issues, as `{path, message, code}` with the parameter name as path. */
export function toValidationIssues(issues: readonly ZodIssueLike[]): ValidationIssue[] {
  return issues.flatMap((issue): ValidationIssue[] => {
    const path = issue.instancePath.replace(/^\//, '').split('/').filter(Boolean).join('.');
    // An unknown parameter is an issue of the whole query in zod; name each one instead.
    if (issue.keyword === 'unrecognized_keys' && Array.isArray(issue.params?.keys)) {
      return issue.params.keys.map((key) => ({
        path: String(key),
        message: `Unrecognized parameter "${String(key)}"`,
        code: 'unrecognized_keys',
      }));
    }
    return [{ path, message: issue.message ?? 'Invalid value', code: issue.keyword }];
  });
}

const CONTEXT_NAMES: Record<string, string> = {
  querystring: 'query parameters',
  params: 'path parameters',
  headers: 'headers',
  body: 'body',
};

function handleError(
  this: FastifyInstance,
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  if (hasZodFastifySchemaValidationErrors(error)) {
    const issues = toValidationIssues(error.validation as unknown as ZodIssueLike[]);
    const where = CONTEXT_NAMES[error.validationContext ?? ''] ?? 'request';
    const summary = issues.map((issue) =>
      issue.path ? `${issue.path}: ${issue.message}` : issue.message,
    );
    return sendError(request, reply, 422, `Invalid ${where}: ${summary.join('; ')}`, issues);
  }
  if (error instanceof ApiError) {
    // A server too busy for now (no turn at the pool): worth trying again in a second.
    if (error.statusCode === 503) reply.header('retry-after', '1');
    return sendError(request, reply, error.statusCode, error.message, error.validationErrors);
  }
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    // Fastify's own client errors (bad content type, oversized body, …): their messages
    // describe the request, not the server.
    return sendError(request, reply, status, error.message);
  }
  const databaseFailure = classifyDatabaseError(error);
  if (databaseFailure) {
    request.log.warn({ err: error }, 'database unavailable');
    reply.header('retry-after', '1');
    return databaseFailure === 'timeout'
      ? sendError(request, reply, 504, 'Gateway Timeout: the database did not answer in time')
      : sendError(request, reply, 503, 'Service Unavailable: the database cannot be reached');
  }
  request.log.error({ err: error }, 'request failed');
  return sendError(request, reply, 500, 'Internal Server Error');
}

export default fp(
  async (app) => {
    app.setErrorHandler(handleError);
    app.setNotFoundHandler((request, reply) =>
      sendError(request, reply, 404, `Route ${request.method} ${requestPath(request)} not found`),
    );
  },
  { name: 'error-handler' },
);
