import { describe, expect, it } from "vitest";
import { addressBehindProxies, canonicalAddress } from "../../src/http/client-address";
import { addressLimitSubject } from "../../src/services/rate-limit/address";

const PEER = "10.0.0.5";

describe("canonicalAddress", () => {
  it.each([
    ["203.0.113.9", "203.0.113.9"],
    [" 203.0.113.9 ", "203.0.113.9"],
    ["203.0.113.9:51234", "203.0.113.9"],
    ["2001:DB8:0:0::1", "2001:db8::1"],
    ["2001:db8:0000:0000:0000:0000:0000:0001", "2001:db8::1"],
    ["[2001:db8::1]", "2001:db8::1"],
    ["[2001:db8::1]:443", "2001:db8::1"],
    ["fe80::1%eth0", "fe80::1"],
    // How a dual-stack socket reports an IPv4 peer: the same counter as the plain IPv4.
    ["::ffff:203.0.113.9", "203.0.113.9"],
    ["::1", "::1"],
  ])("reads %j as %j", (text, address) => {
    expect(canonicalAddress(text)).toBe(address);
  });

  it.each(["", "unknown", "_hidden", "client.example.com", "203.0.113", "256.0.0.1", "01.2.3.4", "1::2::3", "2001:db8::g", "[203.0.113.9]", "203.0.113.9:port", `2001:db8::${"0:".repeat(30)}1`, "1.2.3.4\u0000"])(
    "refuses %j",
    (text) => {
      expect(canonicalAddress(text)).toBeNull();
    },
  );
});

describe("addressBehindProxies", () => {
  it("with no proxy trusted, takes the peer and ignores the header", () => {
    expect(addressBehindProxies(PEER, "198.51.100.1", 0)).toBe(PEER);
    expect(addressBehindProxies("::ffff:10.0.0.5", null, 0)).toBe(PEER);
  });

  it("with one proxy, takes the entry it appended: the rightmost", () => {
    expect(addressBehindProxies(PEER, "198.51.100.1", 1)).toBe("198.51.100.1");
    expect(addressBehindProxies(PEER, "198.51.100.1:40000", 1)).toBe("198.51.100.1");
  });

  it("with two proxies, takes the entry the outer one appended: second from the right", () => {
    expect(addressBehindProxies(PEER, "198.51.100.1, 10.0.0.9", 2)).toBe("198.51.100.1");
    expect(addressBehindProxies(PEER, "198.51.100.1,10.0.0.9", 2)).toBe("198.51.100.1");
  });

  it("ignores entries the client sent ahead of our proxies' own, whatever they say", () => {
    expect(addressBehindProxies(PEER, "1.1.1.1, 198.51.100.1", 1)).toBe("198.51.100.1");
    expect(addressBehindProxies(PEER, "1.1.1.1, 2.2.2.2, 198.51.100.1, 10.0.0.9", 2)).toBe("198.51.100.1");
    expect(addressBehindProxies(PEER, "not an address, <script>, 198.51.100.1", 1)).toBe("198.51.100.1");
  });

  it("reads the header across several X-Forwarded-For lines, as the runtime joins them", () => {
    const headers = new Headers([["x-forwarded-for", "1.1.1.1"], ["x-forwarded-for", "198.51.100.1"], ["x-forwarded-for", "10.0.0.9"]]);
    expect(addressBehindProxies(PEER, headers.get("x-forwarded-for"), 2)).toBe("198.51.100.1");
  });

  it("takes IPv6 entries in one spelling", () => {
    expect(addressBehindProxies("::1", "2001:DB8::0:7", 1)).toBe("2001:db8::7");
    expect(addressBehindProxies(PEER, "[2001:db8::7]:51000, 10.0.0.9", 2)).toBe("2001:db8::7");
  });

  it("falls back to the peer when the header is missing or shorter than the proxies it should have passed", () => {
    expect(addressBehindProxies(PEER, null, 1)).toBe(PEER);
    expect(addressBehindProxies(PEER, undefined, 2)).toBe(PEER);
    // One entry with two proxies trusted: the outer proxy was bypassed, and that entry may be the client's own.
    expect(addressBehindProxies(PEER, "198.51.100.1", 2)).toBe(PEER);
  });

  it("falls back to the peer when an entry our proxies should have written is not an address", () => {
    for (const header of ["", " ", ",", "198.51.100.1,", "unknown", "198.51.100.1, garbage", "garbage, 10.0.0.9", "x".repeat(10_000)]) {
      expect(addressBehindProxies(PEER, header, header.includes("10.0.0.9") ? 2 : 1), JSON.stringify(header.slice(0, 40))).toBe(PEER);
    }
  });

  it("answers null, never a header value, when the peer is unknown and the header cannot be used", () => {
    expect(addressBehindProxies(undefined, "198.51.100.1", 0)).toBeNull();
    expect(addressBehindProxies(null, "198.51.100.1", 2)).toBeNull();
    expect(addressBehindProxies("not-an-address", null, 1)).toBeNull();
    // The header alone is still what one trusted proxy wrote.
    expect(addressBehindProxies(undefined, "198.51.100.1", 1)).toBe("198.51.100.1");
  });
});

describe("addressLimitSubject", () => {
  it.each([
    ["203.0.113.9", "203.0.113.9"],
    ["2001:db8::1", "2001:db8:0:0::/64"],
    ["2001:db8:0:0:ffff:1:2:3", "2001:db8:0:0::/64"],
    ["2001:db8:a:b:c::", "2001:db8:a:b::/64"],
    ["2001:db8:a:b::c", "2001:db8:a:b::/64"],
    ["::1", "0:0:0:0::/64"],
    ["fe80::1", "fe80:0:0:0::/64"],
    ["1:2:3:4:5:6:7:8", "1:2:3:4::/64"],
  ])("counts %s as %s", (address, subject) => {
    expect(addressLimitSubject(address)).toBe(subject);
  });

  it("gives one subject to every address of one /64, whatever its spelling", () => {
    const spellings = ["2001:DB8:0:7:0:0:0:1", "2001:db8:0:7::ffff", "[2001:db8::7:1:2:3:4]:443"].map((a) => addressLimitSubject(canonicalAddress(a) as string));
    expect(spellings).toEqual(["2001:db8:0:7::/64", "2001:db8:0:7::/64", "2001:db8:0:7::/64"]);
  });
});
