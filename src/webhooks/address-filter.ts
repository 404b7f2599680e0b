// Where webhooks may be sent (docs/webhooks.md, "Safety"): only to public unicast
// addresses over https://, unless WEBHOOK_ALLOW_PRIVATE_NETWORKS names the range, which
// then also allows http://. Checked twice: on the URL when an endpoint is added (an
// address or `localhost` written in it), and on every address its host resolves to when
// a delivery is sent (send.ts connects to the address checked, never resolving
// again, so a name cannot change its answer in between).
import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { allowedRanges, inAllowance, type Range } from '../address-ranges.js';

export { allowedRanges };

export class RefusedAddressError extends Error {
  override name = 'RefusedAddressError';
}

/**
 * Why a delivery to `address` is refused, or undefined when it may go there. Public
 * unicast is the only range ipaddr.js names `unicast`; every other — loopback, private,
 * link-local (cloud metadata at 169.254.169.254), unique-local, carrier-grade NAT,
 * multicast, reserved, and the IPv6 ranges that embed an IPv4 address (NAT64, 6to4,
 * Teredo) — needs the allowance. An IPv4-mapped IPv6 address counts as its IPv4 address.
 */
export function refusalOf(address: string, allowed: readonly Range[]): string | undefined {
  if (!ipaddr.isValid(address)) return `${address} is not an IP address`;
  const parsed = ipaddr.process(address);
  if (inAllowance(parsed, allowed)) return undefined;
  const range = parsed.range();
  if (range === 'unicast') return undefined;
  // ipaddr.js's range names, as words: linkLocal → link local.
  const named = range.replace(/[A-Z]/g, (letter) => ` ${letter.toLowerCase()}`);
  return `${address} is not a public address (${named}); allow its range with WEBHOOK_ALLOW_PRIVATE_NETWORKS`;
}

/** http:// goes only to the allowance's ranges (a network the operator vouches for). */
const plainHttpAllowed = (address: string, allowed: readonly Range[]) =>
  inAllowance(ipaddr.process(address), allowed);

/** A URL's host without IPv6 brackets: `[::1]` → `::1`. */
const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

const MAX_URL_LENGTH = 2_048;

/**
 * Checks a URL given for an endpoint, without sending anything (no DNS either): https://
 * (or http:// to an allowed range), no user name or password, and no refused address or
 * `localhost` written in it. Returns the URL as it will be stored.
 */
export function checkEndpointUrl(text: string, allowance: readonly string[]): string {
  if (text.length > MAX_URL_LENGTH) {
    throw new RefusedAddressError(`A webhook URL must be at most ${MAX_URL_LENGTH} characters`);
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new RefusedAddressError(`${JSON.stringify(text)} is not a URL`);
  }
  const allowed = allowedRanges(allowance);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allowed.length > 0)) {
    throw new RefusedAddressError(
      `A webhook URL must start with https:// (http:// only to networks named in WEBHOOK_ALLOW_PRIVATE_NETWORKS), not ${url.protocol}//`,
    );
  }
  if (url.username || url.password) {
    throw new RefusedAddressError('A webhook URL must not contain a user name or password');
  }
  const host = hostOf(url);
  if (ipaddr.isValid(host)) {
    const refusal = refusalOf(host, allowed);
    if (refusal) throw new RefusedAddressError(`Refused webhook URL: ${refusal}`);
    if (url.protocol === 'http:' && !plainHttpAllowed(host, allowed)) {
      throw new RefusedAddressError(
        `Refused webhook URL: http:// is only for networks named in WEBHOOK_ALLOW_PRIVATE_NETWORKS; use https://`,
      );
    }
  } else if (host === 'localhost' || host.endsWith('.localhost')) {
    // Names that resolve to loopback by definition (RFC 6761); others are checked when sent.
    if (!allowed.some(([address]) => address.range() === 'loopback')) {
      throw new RefusedAddressError(
        'Refused webhook URL: localhost is not a public address (loopback); allow its range with WEBHOOK_ALLOW_PRIVATE_NETWORKS',
      );
    }
  }
  return url.href;
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/**
 * The addresses to send a delivery to `url` at: its host's, when every address the host
 * resolves to is allowed (one refused address refuses the host: which one a client would
 * pick is not ours to guess), and http:// only to an allowed range.
 */
export async function resolveTarget(
  url: URL,
  allowed: readonly Range[],
): Promise<ResolvedAddress[]> {
  const host = hostOf(url);
  const addresses = ipaddr.isValid(host)
    ? [{ address: host, family: ipaddr.parse(host).kind() === 'ipv4' ? 4 : 6 }]
    : await lookup(host, { all: true, verbatim: true });
  if (addresses.length === 0) throw new RefusedAddressError(`${host} resolves to no address`);
  for (const { address } of addresses) {
    const refusal = refusalOf(address, allowed);
    if (refusal) throw new RefusedAddressError(`refused address: ${host}: ${refusal}`);
    if (url.protocol === 'http:' && !plainHttpAllowed(address, allowed)) {
      throw new RefusedAddressError(
        `refused address: ${host}: http:// is only for networks named in WEBHOOK_ALLOW_PRIVATE_NETWORKS`,
      );
    }
  }
  return addresses.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
}
