/**
 * Which addresses webhook deliveries may connect to (docs/webhooks.md, "Internal addresses").
 * A project admin chooses the URL, so without a check the backend would POST, from inside the
 * network it runs in, to loopback, private, link-local (cloud metadata at 169.254.169.254) or
 * unique-local addresses, and the delivery log's status and error text would let them probe
 * internal ports. Only globally routable unicast addresses are reached, unless the operator
 * allows more (SPECTATOR_WEBHOOK_ALLOW, CIDR ranges) for receivers on premises.
 *
 * The check runs when a URL is registered (literal addresses, and names as they resolve then) and
 * again on every connection, in the socket's own DNS lookup: a name that resolved to a public
 * address at registration and to an internal one later (DNS rebinding) is refused then. Cloud
 * metadata names (`metadata.google.internal`, …) are refused by name, at registration and on
 * connection, whatever they resolve to (or whether they resolve here at all; the allow-list,
 * which is of addresses, does not open them).
 */
import dns from 'node:dns';
import type { LookupAddress, LookupOptions } from 'node:dns';
import ipaddr from 'ipaddr.js';
import { Agent } from 'undici';
import { type IpRange, parseIpRange } from '../common/ip-range';

/** Resolves a name to all its addresses, as `dns.lookup` with `all: true` (tests give their own). */
export type Resolver = (
  hostname: string,
  options: LookupOptions,
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

const systemResolver: Resolver = (hostname, options, callback) =>
  dns.lookup(hostname, { ...options, all: true }, callback);

/** Names of cloud metadata services (GCP, AWS): refused even where they do not resolve (outside that cloud). */
const METADATA_NAMES = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'instance-data',
  'instance-data.ec2.internal',
]);

/** Why a host name must not be reached whatever it resolves to, or null. */
function nameRefusal(hostname: string): string | null {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return METADATA_NAMES.has(name) ? `${name} is a cloud metadata name` : null;
}

/** The addresses a delivery may reach: public unicast ones, and those in the operator's allowed ranges. */
export class TargetGuard {
  private readonly allowed: IpRange[];

  /**
   * @param allow CIDR ranges or single addresses (`10.1.0.0/16`, `127.0.0.1`, `::1`); checked by parseAllowList.
   * @param resolve how names are resolved, at registration and on every connection (default `dns.lookup`).
   */
  constructor(
    allow: readonly string[],
    private readonly resolve: Resolver = systemResolver,
  ) {
    this.allowed = allow.map(parseIpRange);
  }

  /** Why a delivery must not connect to `address` (`a loopback address`), or null when it may. */
  refusal(address: string): string | null {
    if (!ipaddr.isValid(address)) return `not an IP address`;
    let parsed = ipaddr.parse(address);
    if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress())
      parsed = (parsed as ipaddr.IPv6).toIPv4Address();
    if (this.allowed.some(([network, bits]) => network.kind() === parsed.kind() && parsed.match(network, bits)))
      return null;
    const range = parsed.range();
    return range === 'unicast' ? null : `${describeRange(range)} (${parsed.toString()})`;
  }

  /**
   * Why a URL's host must not be reached when it is a literal address (which connections use without
   * a lookup, so the lookup's check never sees it); null for a name or an allowed address.
   */
  literalRefusal(url: string): string | null {
    const host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');
    return ipaddr.isValid(host) ? this.refusal(host) : null;
  }

  /** Why the URL's host must not be reached, for a literal address or a name that resolves now; null when fine. */
  async urlRefusal(url: string): Promise<string | null> {
    const host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');
    if (ipaddr.isValid(host)) return this.refusal(host);
    const byName = nameRefusal(host);
    if (byName !== null) return byName;
    let addresses: LookupAddress[];
    try {
      addresses = await new Promise<LookupAddress[]>((resolve, reject) =>
        this.resolve(host, {}, (error, found) => (error ? reject(error) : resolve(found))),
      );
    } catch {
      return null; // not resolvable now: every delivery is checked as it connects
    }
    for (const { address } of addresses) {
      const refusal = this.refusal(address);
      if (refusal !== null) return `${host} resolves to ${refusal}`;
    }
    return null;
  }

  /**
   * An undici dispatcher whose connections resolve names through `dns.lookup` and refuse any
   * address the guard refuses (the error's code is `EADDRNOTALLOWED`, its message says why).
   */
  dispatcher(options: { connectTimeoutMs: number }): Agent {
    return new Agent({ connect: { lookup: this.lookup, timeout: options.connectTimeoutMs } });
  }

  /** `net.connect`'s `lookup`, with the guard applied to every address. Literal IP hosts never reach it: see literalRefusal. */
  private readonly lookup = (
    hostname: string,
    options: LookupOptions,
    callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    const byName = nameRefusal(hostname);
    if (byName !== null) return callback(notAllowed(byName), []);
    this.resolve(hostname, options, (error, addresses) => {
      if (error) return callback(error, []);
      for (const { address } of addresses) {
        const refusal = this.refusal(address);
        if (refusal !== null) return callback(notAllowed(`${hostname} resolves to ${refusal}`), []);
      }
      if (options.all === true) return callback(null, addresses);
      const [first] = addresses;
      if (!first) return callback(notAllowed(`${hostname} resolves to no address`), []);
      callback(null, first.address, first.family);
    });
  };
}

/** An error in the shape of a failed connection, so the delivery log names it like ECONNREFUSED. */
function notAllowed(message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${message}: webhooks do not reach internal addresses (SPECTATOR_WEBHOOK_ALLOW)`), {
    code: 'EADDRNOTALLOWED',
  });
}

function describeRange(range: string): string {
  const names: Record<string, string> = {
    loopback: 'a loopback address',
    private: 'a private address',
    linkLocal: 'a link-local address (cloud metadata lives there)',
    uniqueLocal: 'a unique-local address',
    unspecified: 'the unspecified address',
    carrierGradeNat: 'a shared (carrier-grade NAT) address',
    multicast: 'a multicast address',
    broadcast: 'the broadcast address',
    reserved: 'a reserved address',
  };
  return names[range] ?? `a non-public address (${range})`;
}
