// What a settings page module is given by the web application's routes (routes.ts): the
// route options that sign in and check a form post, and the signed-in view of a request.
import type { FastifyReply, FastifyRequest, RouteShorthandOptions } from 'fastify';
import type { Actor } from '../../../audit/entry.js';
import type { PasswordHashing } from '../../users/password.js';
import { html } from '../html.js';
import { sendPage } from '../http.js';
import { type Signed, settingsLayout } from '../views.js';

export interface PageContext {
  signedIn: RouteShorthandOptions;
  signedInPost: RouteShorthandOptions;
  /** The signed-in user, organisation and CSRF token of a request. */
  view(request: FastifyRequest): Signed;
  sessionIdOf(request: FastifyRequest): string;
  notFound(reply: FastifyReply): FastifyReply;
  /** The query flag of a page reached because its form had been sent already. */
  resentFlag: string;
  /** The signed-in user as the audit log records them. */
  actorOf(request: FastifyRequest): Actor;
  /** How the one-time passwords of new and reset users are hashed. */
  passwordHashing: PasswordHashing;
}

/** A page's URL as its routes register it (the web application is mounted at /app). */
export const routeOf = (page: string) => page.slice('/app'.length);

/** 403 for a user whose role does not open the page (a link typed, or a form of an older page). */
export function forbidden(reply: FastifyReply, signed: Signed, message: string) {
  const content = html`<p class="notice notice-info">${message}</p>`;
  return sendPage(reply, 403, settingsLayout(signed, 'connections', 'Not allowed', content));
}
