// Which compplan server a command that prints or calls an address means, and why: the
// --base-url flag, else COMPPLAN_BASE_URL, else the server this machine's environment
// would start (`compplan serve` with its PORT and HOST). Commands print the address with
// where it came from, so that a wrong one is recognised as wrong.
import { type Environment, loadConfig, localUrl } from '../config.js';
import { CliError, EXIT_USAGE } from './errors.js';

export const BASE_URL_VARIABLE = 'COMPPLAN_BASE_URL';

export interface ServerAddress {
  /** The server's root URL, without a trailing slash, e.g. http://127.0.0.1:3000. */
  url: string;
  /** Where it came from, for people: "--base-url", "COMPPLAN_BASE_URL", "PORT=8080", … */
  source: string;
}

function withoutTrailingSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

export function serverAddress(flag: string | undefined, env: Environment): ServerAddress {
  const given =
    flag !== undefined
      ? { text: flag, source: '--base-url' }
      : env[BASE_URL_VARIABLE]
        ? { text: env[BASE_URL_VARIABLE], source: BASE_URL_VARIABLE }
        : undefined;
  if (given) {
    if (!URL.canParse(given.text) || !/^https?:$/.test(new URL(given.text).protocol)) {
      throw new CliError(`${given.source} must be an http(s) URL, got "${given.text}"`, EXIT_USAGE);
    }
    return { url: withoutTrailingSlash(given.text), source: given.source };
  }
  // PORT and HOST are read (and checked) as `compplan serve` reads them.
  const { port, host } = loadConfig({ PORT: env.PORT, HOST: env.HOST });
  const set = (['PORT', 'HOST'] as const).filter((name) => env[name]);
  const source =
    set.length > 0
      ? set.map((name) => `${name}=${env[name]}`).join(' and ')
      : 'the defaults of compplan serve: PORT and HOST unset';
  return { url: localUrl(host, port), source };
}

/** "http://127.0.0.1:3000 (from PORT=3000)": the address and why it is this one. */
export function describeAddress({ url, source }: ServerAddress): string {
  return `${url} (from ${source})`;
}

/** The help of a command's --base-url flag. */
export function baseUrlHelp(what: string): string {
  return `${what} (default: ${BASE_URL_VARIABLE}, else the address compplan serve would listen on with PORT and HOST: http://127.0.0.1:3000 when both are unset)`;
}
