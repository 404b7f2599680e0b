// The HTTP plumbing of the web application: cookies, the security headers of its pages,
// form bodies, and whether a request came over TLS.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

export const SESSION_COOKIE = 'compplan_session';
/** Double-submit token of the sign-in form, before there is a session to tie it to. */
export const SIGN_IN_COOKIE = 'compplan_sign_in';
// Cookies go only to the web application, never with API requests.
const COOKIE_PATH = '/app';

export function readCookie(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at === -1) continue;
    if (part.slice(0, at).trim() === name) {
      const value = part.slice(at + 1).trim();
      try {
        return decodeURIComponent(value);
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/**
 * https when compplan itself terminated TLS, or when a proxy named in TRUST_PROXY says so
 * with X-Forwarded-Proto (Fastify's request.protocol); the header of anyone else is not
 * believed.
 */
export function isHttps(request: FastifyRequest): boolean {
  return request.protocol === 'https';
}

/** This server's origin as the client reached it, for addresses shown on a page. */
export function originOf(request: FastifyRequest): string {
  return `${isHttps(request) ? 'https' : 'http'}://${request.host}`;
}

export interface CookieOptions {
  secure: boolean;
  /** Seconds; 0 deletes the cookie. */
  maxAge: number;
  sameSite: 'Lax' | 'Strict';
}

export function setCookie(
  reply: FastifyReply,
  name: string,
  value: string,
  options: CookieOptions,
): void {
  const parts = [
    `${name}=${encodeURIComponent(value)}`,
    `Path=${COOKIE_PATH}`,
    `Max-Age=${options.maxAge}`,
    'HttpOnly',
    `SameSite=${options.sameSite}`,
  ];
  if (options.secure) parts.push('Secure');
  const existing = reply.getHeader('set-cookie');
  const list =
    existing === undefined ? [] : Array.isArray(existing) ? existing : [String(existing)];
  reply.header('set-cookie', [...list, parts.join('; ')]);
}

// Pages: nothing from elsewhere, no framing, no inline script or style, forms post only
// here. Cache-Control no-store: the pages show keys (and once, a secret).
const PAGE_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=(), usb=()',
};

export function sendPage(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply
    .code(status)
    .headers({ ...PAGE_HEADERS, 'cache-control': 'no-store' })
    .type('text/html; charset=utf-8')
    .send(body);
}

export function redirect(reply: FastifyReply, location: string): FastifyReply {
  // 303: after a form post the browser follows with GET.
  return reply.headers(PAGE_HEADERS).header('cache-control', 'no-store').redirect(location, 303);
}

/** Security headers on every response of the scope, pages and assets alike. */
export function addSecurityHeaders(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    for (const [name, value] of Object.entries(PAGE_HEADERS)) {
      if (!reply.hasHeader(name)) reply.header(name, value);
    }
    if (isHttps(request)) {
      reply.header('strict-transport-security', 'max-age=31536000');
    }
    return payload;
  });
}

// Forms are small: a name, a password, a token.
const FORM_BODY_LIMIT = 16 * 1024;

/**
 * Parses application/x-www-form-urlencoded bodies (in this scope only) into strings. A
 * body sent compressed (Content-Encoding other than identity) is refused with 415 rather
 * than read as form text: browsers never compress a form post, and its bytes parsed as
 * a form would only be a confusing "field missing" further on.
 */
export function acceptForms(app: FastifyInstance): void {
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT },
    (request, body, done) => {
      const encoding = request.headers['content-encoding']?.trim().toLowerCase();
      if (encoding !== undefined && encoding !== '' && encoding !== 'identity') {
        done(compressedFormError(encoding), undefined);
        return;
      }
      done(null, Object.fromEntries(new URLSearchParams(String(body))));
    },
  );
}

function compressedFormError(encoding: string): Error {
  return Object.assign(
    new Error(
      `Form posts are read uncompressed only (this one came with Content-Encoding: ${encoding.slice(0, 40)}).`,
    ),
    { statusCode: 415 },
  );
}

export function formField(request: FastifyRequest, name: string): string {
  const body = request.body;
  if (typeof body !== 'object' || body === null) return '';
  const value = (body as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : '';
}
