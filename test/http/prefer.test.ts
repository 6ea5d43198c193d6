import { describe, expect, it } from "vitest";
import { preferredWait } from "../../src/http/prefer";

/** RFC 7240: a wait above the maximum is clamped; one that asks for none or cannot be read is ignored. */
describe("preferredWait", () => {
  it.each([
    [undefined, undefined],
    ["", undefined],
    ["wait=5", 5],
    ["WAIT = 7", 7],
    ['wait="12"', 12],
    ["respond-async, wait=60", 60],
    ["wait=10; foo=bar", 10],
    ["wait=007", 7],
    ["wait=3, wait=100", 3],
    ['foo="a, wait=5", wait=8', 8],
    ['foo="a \\" wait=5", wait=9', 9],
    ["return=minimal", undefined],
    ["waiting=5", undefined],
    ["wait=61", 60],
    ["wait=120", 60],
    [`wait=${"9".repeat(400)}`, 60],
    ["wait=0", undefined],
    ["wait=000", undefined],
    ["wait", undefined],
    ["wait=", undefined],
    ['wait=""', undefined],
    ["wait=abc", undefined],
    ["wait=1.5", undefined],
    ["wait=-3", undefined],
    ["wait=+3", undefined],
    ["wait=1e1", undefined],
    // Only the first wait is considered (RFC 7240 §2), even when it is one to ignore.
    ["wait=abc, wait=5", undefined],
  ])("%s → %s", (header, expected) => {
    expect(preferredWait(header)).toBe(expected);
  });
});
