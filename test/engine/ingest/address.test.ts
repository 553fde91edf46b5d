import { describe, expect, it } from "vitest";
import { isPublicAddress, nonPublicReason } from "../../../src/engine/ingest/address.js";

describe("the address policy", () => {
  it.each([
    "0.0.0.0",
    "10.1.2.3",
    "100.64.0.1",
    "100.127.255.255",
    "127.0.0.1",
    "127.255.0.9",
    "169.254.169.254",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.0.10",
    "192.0.2.1",
    "198.18.0.1",
    "224.0.0.1",
    "239.255.255.250",
    "255.255.255.255",
    "::",
    "::1",
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "::ffff:10.0.0.1",
    "::ffff:169.254.169.254",
    "::127.0.0.1",
    "64:ff9b::7f00:1",
    "2002:7f00:1::",
    "fc00::1",
    "fd12:3456::1",
    "fe80::1",
    "fe80::1%eth0",
    "fec0::1",
    "ff02::1",
    "2001:db8::1",
    "0:0:0:0:0:0:0:1",
  ])("refuses %s", (address) => {
    expect(isPublicAddress(address)).toBe(false);
    expect(nonPublicReason(address)).toMatch(/address/);
  });

  it.each([
    "93.184.215.14",
    "8.8.8.8",
    "1.1.1.1",
    "100.63.255.255",
    "100.128.0.1",
    "172.15.255.255",
    "172.32.0.1",
    "2606:4700:4700::1111",
    "2a00:1450:4001:80b::200e",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",
  ])("allows the public address %s", (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  it("names the kind of address it refuses", () => {
    expect(nonPublicReason("127.0.0.1")).toBe("a loopback address");
    expect(nonPublicReason("100.100.1.1")).toBe("a carrier-grade NAT (shared) address");
    expect(nonPublicReason("::ffff:192.168.1.1")).toBe("an IPv4-mapped form of a private address");
    expect(nonPublicReason("fd00::1")).toBe("a unique-local (private) address");
    expect(nonPublicReason("example.com")).toBe("not an IP address");
  });
});
