import { expect } from "vitest";
import { csrfOf, DashboardClient } from "../dashboard/client";

export const PASSWORD = "a long and unusual passphrase";

let counter = 0;
/** A fresh, unused email (throttling is per email, so tests never share one). */
export const newEmail = () => `User${++counter}.${crypto.randomUUID().slice(0, 8)}@Example.com`;

let addresses = 0;
/**
 * A client at an address of its own (sign-ups are limited per client; tests never share one by accident). An
 * IPv6 client is counted by its /64 (src/http/client-key.ts), so each gets a /64 of its own.
 */
export function clientAt(address = `2001:db8:1:${(++addresses).toString(16)}::1`) {
  const client = new DashboardClient();
  client.defaults["CF-Connecting-IP"] = address;
  return client;
}

/** A customer signed up through the real form; returns the client (signed in), the key shown and the page. */
export async function signedUp(email = newEmail(), client = clientAt(), password = PASSWORD) {
  const response = await client.submit("/console/sign-up", "/console/sign-up", { email, password });
  expect(response.status).toBe(303);
  expect(response.headers.get("location")).toBe("/console/welcome");
  const welcome = await client.get("/console/welcome");
  expect(welcome.status).toBe(200);
  const html = await welcome.text();
  const key = /value="(p6_[^"]+)"/.exec(html)?.[1];
  expect(key).toBeDefined();
  return { client, email, key: key!, html };
}

export async function signInForm(client: DashboardClient, email: string, password: string) {
  const page = await client.get("/console/sign-in");
  return client.post("/console/sign-in", { _csrf: csrfOf(await page.text()), email, password });
}
