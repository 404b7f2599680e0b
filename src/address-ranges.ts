// IP address ranges (CIDR) as people write them: webhook allowances
// (WEBHOOK_ALLOW_PRIVATE_NETWORKS) and the address allowlists of API keys. An address
// alone is a range of one; an IPv4-mapped IPv6 address counts as its IPv4 address.
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

export type Address = ReturnType<typeof ipaddr.parse>;
export type Range = [Address, number];

/**
 * A range from its text (`203.0.113.0/24`, `2001:db8::/32`, `198.51.100.7`), or undefined
 * when it is not one. Stricter than ipaddr.js alone, which also reads `127.1` and hex.
 */
export function parseRange(text: string): Range | undefined {
  const [address = '', bits, ...rest] = text.split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return undefined;
  const max = version === 4 ? 32 : 128;
  if (bits === undefined) return [ipaddr.parse(address), max];
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) return undefined;
  return [ipaddr.parse(address), Number(bits)];
}

/** Ranges from entries already validated (configuration, stored allowlists). */
export function allowedRanges(entries: readonly string[]): readonly Range[] {
  return entries.map((entry) => {
    if (entry.includes('/')) return ipaddr.parseCIDR(entry);
    const address = ipaddr.parse(entry);
    return [address, address.kind() === 'ipv4' ? 32 : 128];
  });
}

export function inAllowance(address: Address, allowed: readonly Range[]): boolean {
  return allowed.some((range) => range[0].kind() === address.kind() && address.match(range));
}

/** Whether a client address (as text, possibly IPv4-mapped IPv6) is in one of the ranges. */
export function addressInRanges(address: string, ranges: readonly Range[]): boolean {
  if (!ipaddr.isValid(address)) return false;
  return inAllowance(ipaddr.process(address), ranges);
}
