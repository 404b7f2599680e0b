// A browser-like HTTP client for the web application under /app: keeps cookies, never
// follows redirects (tests assert them), and reads the CSRF token out of forms. The
// browser tests (test/web) drive real Chromium; this drives the same server with fetch,
// for the cases a browser would never send (a forged or cross-site post).
import { gzipSync } from 'node:zlib';
import type { DataSetInput } from '../../src/import/schema.js';
import { nodeRequest } from './raw-http.js';
import type { TestServer } from './server.js';
import { createUser } from './set-up.js';

/** A request from `localAddress` over node:http, as a fetch Response. */
async function fromAddress(
  url: string,
  localAddress: string,
  method: string,
  headers: Record<string, string>,
  body: string | Uint8Array | undefined,
): Promise<Response> {
  const { origin, pathname, search } = new URL(url);
  const answer = await nodeRequest(origin, `${pathname}${search}`, {
    method,
    headers,
    localAddress,
    ...(body === undefined ? {} : { body: Buffer.from(body) }),
  });
  const responseHeaders = new Headers();
  for (const [name, value] of Object.entries(answer.headers)) {
    for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) {
      responseHeaders.append(name, one);
    }
  }
  const empty = answer.status === 204 || answer.status === 304;
  return new Response(empty ? null : answer.rawBody, {
    status: answer.status,
    headers: responseHeaders,
  });
}

export interface WebResponse {
  status: number;
  headers: Headers;
  body: string;
  /** The Location header of a redirect, else null. */
  location: string | null;
  /** The raw Set-Cookie lines of the response. */
  setCookies: string[];
}

export class WebClient {
  readonly cookies = new Map<string, string>();

  /**
   * `localAddress`: the requests come from this address (127.0.0.2, …: the suite's servers
   * listen on 127.0.0.1, which any address of 127/8 reaches), sent with node:http, since
   * fetch cannot choose it; gzip and uploads are fetch's only.
   */
  constructor(
    readonly baseUrl: string,
    readonly localAddress?: string,
  ) {}

  private cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  async request(
    method: string,
    path: string,
    options: {
      form?: Record<string, string>;
      headers?: Record<string, string>;
      /** Sends the form gzipped, with Content-Encoding: gzip (no browser does). */
      gzip?: boolean;
    } = {},
  ): Promise<WebResponse> {
    const headers: Record<string, string> = { ...options.headers };
    if (this.cookies.size > 0) headers.cookie = this.cookieHeader();
    let body: string | Uint8Array | undefined;
    if (options.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(options.form).toString();
      if (options.gzip) {
        headers['content-encoding'] = 'gzip';
        body = new Uint8Array(gzipSync(body));
      }
    }
    const response = this.localAddress
      ? await fromAddress(`${this.baseUrl}${path}`, this.localAddress, method, headers, body)
      : await fetch(`${this.baseUrl}${path}`, { method, headers, body, redirect: 'manual' });
    const setCookies = response.headers.getSetCookie();
    for (const line of setCookies) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      if (/Max-Age=0(;|$)/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return {
      status: response.status,
      headers: response.headers,
      body: await response.text(),
      location: response.headers.get('location'),
      setCookies,
    };
  }

  /** Posts a multipart form with one file, as a browser uploads one. */
  async upload(
    path: string,
    fields: Record<string, string>,
    file: { name: string; content: string | Uint8Array },
  ): Promise<WebResponse> {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    form.append('file', new Blob([file.content]), file.name);
    const response = await fetch(`${this.baseUrl}${path}`, {
      method: 'POST',
      headers: { cookie: this.cookieHeader() },
      body: form,
      redirect: 'manual',
    });
    return {
      status: response.status,
      headers: response.headers,
      body: await response.text(),
      location: response.headers.get('location'),
      setCookies: response.headers.getSetCookie(),
    };
  }

  get(path: string, headers?: Record<string, string>): Promise<WebResponse> {
    return this.request('GET', path, headers ? { headers } : {});
  }

  post(
    path: string,
    form: Record<string, string>,
    headers?: Record<string, string>,
  ): Promise<WebResponse> {
    return this.request('POST', path, headers ? { form, headers } : { form });
  }

  /** GETs a page and returns the CSRF token of its (first) form. */
  async csrfToken(path: string): Promise<string> {
    const page = await this.get(path);
    return csrfTokenOf(page.body);
  }

  /** Signs in through the sign-in form; returns the answer to the form post. */
  async signIn(email: string, password: string): Promise<WebResponse> {
    const _csrf = await this.csrfToken('/app/sign-in');
    return this.post('/app/sign-in', { _csrf, email, password });
  }

  /** Signs in with a one-time password and chooses `newPassword`; ends signed in. */
  async signInFirstTime(email: string, oneTimePassword: string, newPassword: string) {
    const signedIn = await this.signIn(email, oneTimePassword);
    if (signedIn.location !== '/app/password') {
      throw new Error(`first sign-in went to ${signedIn.location} (${signedIn.status})`);
    }
    const _csrf = await this.csrfToken('/app/password');
    const chosen = await this.post('/app/password', {
      _csrf,
      password: newPassword,
      confirmation: newPassword,
    });
    if (chosen.location !== '/app/settings/connections') {
      throw new Error(`choosing a password answered ${chosen.status}: ${chosen.body}`);
    }
  }
}

export function csrfTokenOf(html: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!match?.[1]) throw new Error('no CSRF token in the page');
  return match[1];
}

/** The hidden fields (_csrf, _form, …) of the form of a page that posts to `action`. */
export function hiddenFieldsOf(html: string, action: string): Record<string, string> {
  const start = html.indexOf(`<form method="post" action="${action}"`);
  if (start === -1) throw new Error(`no form posting to ${action} in the page`);
  const form = html.slice(start, html.indexOf('</form>', start));
  return Object.fromEntries(
    [...form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map(
      ([, name = '', value = '']) => [name, value],
    ),
  );
}

/**
 * The text content of an HTML fragment, whitespace collapsed (for exact assertions). A
 * `<wbr>` (a place a line may break) is no text, as in the browser's.
 */
export function textOf(html: string): string {
  return html
    .replace(/<wbr>/g, '')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
}

/** A small organisation for the web tests, loaded through the import path. */
export function webDataSet(slug: string, apiKeysEnabled = true): DataSetInput {
  return {
    organization: { slug, name: `${slug[0]?.toUpperCase()}${slug.slice(1)} Corp`, apiKeysEnabled },
    meritCycles: [
      {
        name: '2026 Annual Merit',
        status: 'active',
        startDate: '2026-01-01T00:00:00.000Z',
        endDate: '2026-03-31T23:59:59.999Z',
        currency: 'USD',
      },
    ],
  };
}

/** webDataSet's organisation with employees (of these emails) in its merit cycle. */
export function staffedDataSet(slug: string, emails: string[]): DataSetInput {
  const base = webDataSet(slug);
  const [cycle] = base.meritCycles;
  if (!cycle) throw new Error('webDataSet has a cycle');
  return {
    ...base,
    meritCycles: [
      {
        ...cycle,
        employees: emails.map((email, index) => ({
          email,
          firstName: `First${index}`,
          lastName: `Last${index}`,
          currencyCode: 'USD',
          eligibilityStatus: 'eligible',
          columns: { department: { name: 'Department', type: 'text', value: `Team ${index}` } },
        })),
      },
    ],
  };
}

/** A user made with a one-time password (as `compplan users create`), signed in, password chosen. */
export async function signedInClient(
  server: TestServer,
  email: string,
  role: 'owner' | 'admin',
  org = 'initech',
): Promise<{ client: WebClient; id: string }> {
  const user = await createUser(server.database.db, { org, email, role });
  const client = new WebClient(server.url);
  await client.signInFirstTime(email, user.oneTimePassword, 'a long enough password');
  return { client, id: user.id };
}
