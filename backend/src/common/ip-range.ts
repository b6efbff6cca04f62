import ipaddr from 'ipaddr.js';

/** An address range: a base address and its prefix length (32 or 128 for a single address). */
export type IpRange = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** A CIDR range (`10.1.0.0/16`) or a single address (`127.0.0.1`, `::1`). @throws Error when it is neither. */
export function parseIpRange(text: string): IpRange {
  return text.includes('/')
    ? ipaddr.parseCIDR(text)
    : (() => {
        const address = ipaddr.parse(text);
        return [address, address.kind() === 'ipv4' ? 32 : 128] as IpRange;
      })();
}

/**
 * SPECTATOR_WEBHOOK_ALLOW: comma-separated CIDR ranges or addresses deliveries may reach although
 * they are not public. Pushes a problem for each entry that is neither.
 */
export function parseAllowList(text: string | undefined, problems: string[]): string[] {
  const entries = (text ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  for (const entry of entries) {
    try {
      parseIpRange(entry);
    } catch {
      problems.push(
        `SPECTATOR_WEBHOOK_ALLOW: "${entry}" is not an IP address or CIDR range (e.g. 10.1.0.0/16, 127.0.0.1, fd00::/8)`,
      );
    }
  }
  return entries;
}
