// What every page module (pages/*.ts) is given by the web application's routes (routes.ts):
// the route options that sign in and check a form post, and the signed-in view of a request.
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteShorthandOptions } from 'fastify';
import type { Actor } from '../audit/entry.js';
import type { WebhookConfig } from '../config.js';
import type { UploadPace } from '../import/upload-pace.js';
import type { Organization } from '../tenancy/organizations.js';
import type { PasswordHashing } from '../users/password.js';
import type { User } from '../users/repository.js';

/** Who a signed-in page is for: the user, their organisation, the session's CSRF token. */
export interface Signed {
  user: User;
  organization: Organization;
  csrfToken: string;
}

/** What an operator set (src/config.ts) that pages act on. */
export interface PageSettings {
  webhooks: WebhookConfig;
  changeRetentionDays: number;
  /**
   * How passwords are hashed: production's cost (PASSWORD_HASHING) unless a test gives a
   * cheaper one (buildApp's testing.passwordHashing). Hashes of any cost verify: each
   * names its own.
   */
  passwordHashing: PasswordHashing;
  /** How an upload is timed: by its progress (src/import/upload-pace.ts). */
  uploadPace: UploadPace;
}

export interface PageContext {
  /** A page open to anyone (sign-in): outside the API's 405 answers and OpenAPI document. */
  open: RouteShorthandOptions;
  /** A page for a signed-in user: the session preHandler. */
  signedIn: RouteShorthandOptions;
  /** A form post of a signed-in user: the session preHandler, then the CSRF check. */
  signedInPost: RouteShorthandOptions;
  /** The signed-in user, organisation and CSRF token of a request. */
  view(request: FastifyRequest): Signed;
  sessionIdOf(request: FastifyRequest): string;
  /** The signed-in user as the audit log records them. */
  actorOf(request: FastifyRequest): Actor;
  /** Whether a token sent with a form (a multipart upload's) is this session's, same-site. */
  formTokenOk(request: FastifyRequest, token: string): boolean;
  notFound(reply: FastifyReply): FastifyReply;
  settings: PageSettings;
}

/** A page module: registers its routes in the web application's scope. */
export type Page = (app: FastifyInstance, context: PageContext) => void;
