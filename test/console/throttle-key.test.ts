import { describe, expect, it } from "vitest";
import { clientAt, newEmail, PASSWORD, signedUp } from "./support";

/**
 * Issue 40: throttles keyed by the full client address let one IPv6 client rotate through its /64 past every
 * limit (8 of 8 sign-ups accepted). Sent as the campaign sent it: many addresses of one /64.
 */

let prefixes = 0;
/** A /64 of its own for each test (the documentation prefix 2001:db8::/32). */
const newPrefix = () =>
  `2001:db8:${(0xa000 + ++prefixes).toString(16)}:${(Date.now() % 0xffff).toString(16)}`;

describe("throttles key an IPv6 client by its /64", () => {
  it("30 sign-ups from 30 addresses of one /64 make 5 accounts; the rest are refused", async () => {
    const prefix = newPrefix();
    const statuses: number[] = [];
    for (let i = 1; i <= 30; i++) {
      const response = await clientAt(
        `${prefix}:${i.toString(16)}:${((i * 7919) % 0xffff).toString(16)}::1`,
      ).submit("/console/sign-up", "/console/sign-up", { email: newEmail(), password: PASSWORD });
      statuses.push(response.status);
    }
    expect(statuses.filter((s) => s === 303)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(25);
    // Another /64 is another client; an IPv4 client is still keyed by its whole address.
    await signedUp(newEmail(), clientAt(`${newPrefix()}::1`));
    for (let i = 0; i < 5; i++) await signedUp(newEmail(), clientAt("198.51.100.77"));
    expect(
      (
        await clientAt("198.51.100.77").submit("/console/sign-up", "/console/sign-up", {
          email: newEmail(),
          password: PASSWORD,
        })
      ).status,
    ).toBe(429);
    expect((await signedUp(newEmail(), clientAt("198.51.100.78"))).key).toMatch(/^p6_/);
  });

  it("reset links: 10 an hour per /64, whichever address of it asks", async () => {
    const prefix = newPrefix();
    const statuses: number[] = [];
    for (let i = 1; i <= 12; i++) {
      const response = await clientAt(`${prefix}::${i}`).submit("/console/reset", "/console/reset", {
        email: newEmail(),
      });
      statuses.push(response.status);
    }
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(303));
    expect(statuses.slice(10)).toEqual([429, 429]);
  });
});
