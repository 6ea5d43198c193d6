import { inject } from "vitest";
import { decodePng } from "../../src/images/png";
import type { Rgba } from "../../src/images/rgba";

/**
 * Why the Pango reference (pango-view through the fonts server, test/text/fonts-server.ts) cannot be drawn on
 * this machine, or undefined when it can.
 */
export async function pangoMissing(): Promise<string | undefined> {
  const probe = await fetch(`${inject("fontsUrl")}/pango?text=a&font=Noto%20Sans&size=10`);
  if (probe.status === 404) return probe.text();
  await probe.arrayBuffer();
  return undefined;
}

/** `text` at 48 px in `font` as Pango draws it: black on transparent. */
export async function pango(text: string, font = "Noto Sans"): Promise<Rgba> {
  const query = new URLSearchParams({ text, font, size: "48" });
  const response = await fetch(`${inject("fontsUrl")}/pango?${query}`);
  if (!response.ok) throw new Error(`pango-view: ${response.status} ${await response.text()}`);
  return decodePng(new Uint8Array(await response.arrayBuffer()));
}
