import { describe, expect, it } from "vitest";
import DEJAVU from "../../assets/fonts/DejaVuSans.ttf";
import NOTO_ARABIC from "../../assets/fonts/NotoSansArabic-Regular.ttf";
import { renderText } from "../../src/text/render";

const fonts = [new Uint8Array(NOTO_ARABIC), new Uint8Array(DEJAVU)];
const base = { size: 48, color: "#000000", opacity: 1, fonts };

/** The columns without ink (alpha 0 all the way down). */
function emptyColumns(image: { data: Uint8ClampedArray; width: number; height: number }): number[] {
  const empty: number[] = [];
  for (let x = 0; x < image.width; x++) {
    let inked = false;
    for (let y = 0; y < image.height && !inked; y++)
      inked = (image.data[(y * image.width + x) * 4 + 3] ?? 0) > 0;
    if (!inked) empty.push(x);
  }
  return empty;
}

describe("renderText", () => {
  it("draws distinct Latin characters as distinct pixels", async () => {
    const a = await renderText({ ...base, text: "A" });
    const b = await renderText({ ...base, text: "B" });
    expect(a && b).toBeTruthy();
    expect(Buffer.from(a!.data).equals(Buffer.from(b!.data))).toBe(false);
  });

  it("lays Arabic out right to left: the first logical letter lands on the right", async () => {
    // Alif (one thin stroke), a space, then three joined behs (wide): right to left, the alif is at the right
    // edge, so the space's empty columns sit in the right half.
    const image = await renderText({ ...base, text: "ا ببب" });
    expect(image).toBeTruthy();
    const gap = emptyColumns(image!);
    expect(gap.length).toBeGreaterThan(0);
    expect(Math.min(...gap)).toBeGreaterThan(image!.width / 2);
  });

  it("joins Arabic letters: a joined word is narrower than its letters drawn apart", async () => {
    const joined = await renderText({ ...base, text: "ببب" });
    const apart = await renderText({ ...base, text: "ب ب ب" });
    expect(joined && apart).toBeTruthy();
    expect(joined!.width).toBeLessThan(apart!.width);
  });

  it("returns nothing for blank text", async () => {
    expect(await renderText({ ...base, text: "   " })).toBeUndefined();
  });
});
