import { isIPv4, isIPv6 } from "node:net";

/**
 * The address policy for fetching URLs: only addresses that are routable on the public internet
 * are reachable by default. Everything a server-side fetch could use to reach the machine itself
 * or its network (loopback, private, link-local, unique-local, CGNAT, multicast, unspecified,
 * reserved) is refused, including the IPv6 forms that embed an IPv4 address.
 */

/** Why an address is not public, or null when it is public. */
export function nonPublicReason(address: string): string | null {
  if (isIPv4(address)) return ipv4Reason(parseIPv4(address));
  const groups = parseIPv6(address);
  if (groups === null) return "not an IP address";
  return ipv6Reason(groups);
}

export function isPublicAddress(address: string): boolean {
  return nonPublicReason(address) === null;
}

type V4 = [number, number, number, number];

function parseIPv4(address: string): V4 {
  return address.split(".").map(Number) as V4;
}

function ipv4Reason([a, b, c]: V4): string | null {
  if (a === 0) return "an unspecified ('this network') address";
  if (a === 10) return "a private address";
  if (a === 100 && b >= 64 && b <= 127) return "a carrier-grade NAT (shared) address";
  if (a === 127) return "a loopback address";
  if (a === 169 && b === 254) return "a link-local address";
  if (a === 172 && b >= 16 && b <= 31) return "a private address";
  if (a === 192 && b === 168) return "a private address";
  if (a === 192 && b === 0 && (c === 0 || c === 2)) return "a reserved address";
  if (a === 198 && (b === 18 || b === 19)) return "a reserved (benchmarking) address";
  if (a === 198 && b === 51 && c === 100) return "a reserved (documentation) address";
  if (a === 203 && b === 0 && c === 113) return "a reserved (documentation) address";
  if (a >= 224 && a <= 239) return "a multicast address";
  if (a >= 240) return "a reserved or broadcast address";
  return null;
}

/** Eight 16-bit groups, or null when the text is not an IPv6 address. Accepts a zone ("fe80::1%eth0"). */
export function parseIPv6(address: string): number[] | null {
  const bare = address.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  if (!isIPv6(bare)) return null;
  let text = bare;
  // A trailing dotted quad ("::ffff:127.0.0.1") becomes two groups.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1] !== undefined) {
    const [a, b, c, d] = parseIPv4(dotted[1]);
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((g) => Number.parseInt(g, 16)));
  const left = parse(head);
  if (tail === undefined) return left;
  const right = parse(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

function embeddedIPv4(hi: number, lo: number): V4 {
  return [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff];
}

function ipv6Reason(g: number[]): string | null {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const firstFiveZero = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (firstFiveZero && g5 === 0 && g6 === 0) {
    if (g7 === 0) return "an unspecified address";
    if (g7 === 1) return "a loopback address";
  }
  // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d): judged by the IPv4 address inside.
  if (firstFiveZero && (g5 === 0xffff || g5 === 0)) {
    const inner = ipv4Reason(embeddedIPv4(g6, g7));
    return inner && `an IPv4-mapped form of ${inner}`;
  }
  // NAT64 (64:ff9b::/96) reaches the IPv4 address inside; 64:ff9b:1::/48 is for local use.
  if (g0 === 0x64 && g1 === 0xff9b) {
    if (g2 === 1) return "a local-use NAT64 address";
    if (g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) {
      const inner = ipv4Reason(embeddedIPv4(g6, g7));
      return inner && `a NAT64 form of ${inner}`;
    }
  }
  // 6to4 (2002::/16) carries an IPv4 address in its next 32 bits.
  if (g0 === 0x2002) {
    const inner = ipv4Reason(embeddedIPv4(g1, g2));
    return inner && `a 6to4 form of ${inner}`;
  }
  if (g0 === 0x0100 && g1 === 0 && g2 === 0 && g3 === 0) return "a discard-only address";
  if (g0 === 0x2001 && g1 === 0x0db8) return "a reserved (documentation) address";
  if ((g0 & 0xfe00) === 0xfc00) return "a unique-local (private) address";
  if ((g0 & 0xffc0) === 0xfe80) return "a link-local address";
  if ((g0 & 0xffc0) === 0xfec0) return "a site-local (private) address";
  if ((g0 & 0xff00) === 0xff00) return "a multicast address";
  return null;
}
