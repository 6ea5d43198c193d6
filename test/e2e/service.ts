import { inject } from "vitest";
import type { E2eService } from "./global-setup.ts";

/**
 * The fresh copy's `npm run dev` (test/e2e/global-setup.ts), once it is up. Polls (not a timed assertion:
 * installAndStart's own limits end a hung start); a failed start throws its reason.
 */
export async function e2eService(): Promise<E2eService> {
  const url = inject("e2eServiceUrl");
  for (;;) {
    const response = await fetch(url);
    if (response.status === 200) return (await response.json()) as E2eService;
    if (response.status !== 202) throw new Error(`the e2e service did not come up: ${await response.text()}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** What the fresh copy's `npm run dev` has printed so far, line by line. */
export async function e2eDevOutput(): Promise<string[]> {
  return (await (await fetch(`${inject("e2eServiceUrl")}/dev-output`)).json()) as string[];
}
