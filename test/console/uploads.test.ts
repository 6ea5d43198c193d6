import { describe, expect, it } from "vitest";
import { newAccount } from "../helpers/api";
import { bytes, createUpload, patch } from "../uploads/support";
import { signedUp } from "./support";

const listedIds = (html: string) => [...html.matchAll(/<tr data-id="([0-9A-Z]{26})"/g)].map((m) => m[1]);

describe("console uploads", () => {
  it("lists the account's uploads, newest first, with state, size and sniffed type; never another account's", async () => {
    const { client, key } = await signedUp();
    const other = await newAccount();
    const first = await createUpload(key, 100);
    const data = bytes(2000, 5, new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    const second = await createUpload(key, data.byteLength, {
      "Upload-Metadata": `filename ${btoa("logo.png")}`,
    });
    expect((await patch(key, second.path, 0, data)).status).toBe(204);
    const foreign = await createUpload(other.key, 10);

    const page = await client.get("/console/uploads");
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(listedIds(html)).toEqual([second.id, first.id]);
    expect(html).not.toContain(foreign.id);
    expect(html).toContain("logo.png");
    expect(html).toContain("image/png");
    expect(html).toContain("complete");
    expect(html).toContain("uploading");
    expect(html).toContain('href="/console/uploads"');
  });
});
