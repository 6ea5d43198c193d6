/**
 * The engine's check of PNG image data (src/security/png-data.ts, issue 40): honest PNGs of every layout pass
 * (a false refusal would turn a real image away), and data that inflates past its header is refused with a 415
 * naming the image, after inflating no more than a slice.
 */
import { once } from "node:events";
import zlib from "node:zlib";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { checkImageData } from "../src/security/png-data.ts";

const source = (bytes: Uint8Array) => ({
  read: async (offset: number, length: number) => bytes.subarray(offset, offset + length),
});

const gradient = (width: number, height: number, channels: 1 | 2 | 3 | 4) => {
  const data = Buffer.alloc(width * height * channels);
  for (let i = 0; i < data.length; i++) data[i] = (i * 7) % 251;
  return sharp(data, { raw: { width, height, channels } });
};

function chunk(type: string, data: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** 1×1 RGB whose IDAT is `mib` MiB (64 unless told) of deflated zeros. */
async function bomb(mib = 64): Promise<Buffer> {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(1, 0);
  ihdr.writeUInt32BE(1, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const deflate = zlib.createDeflate({ level: 9 });
  const parts: Buffer[] = [];
  deflate.on("data", (part: Buffer) => parts.push(part));
  const ended = once(deflate, "end");
  const zeros = Buffer.alloc(1024 * 1024);
  for (let i = 0; i < mib; i++) if (!deflate.write(zeros)) await once(deflate, "drain");
  deflate.end();
  await ended;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", Buffer.concat(parts)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

describe("PNG image data against its header", () => {
  it.each([
    ["RGBA", () => gradient(97, 53, 4).png()],
    ["RGB, Adam7 interlaced", () => gradient(97, 53, 3).png({ progressive: true })],
    ["grey + alpha, interlaced, 7×3 (passes left empty)", () => gradient(7, 3, 2).png({ progressive: true })],
    ["grey, 16-bit", () => gradient(40, 20, 1).toColourspace("grey16").png()],
    ["palette, 4 colours (2-bit)", () => gradient(33, 17, 3).png({ palette: true, colours: 4 })],
    ["palette, interlaced", () => gradient(33, 17, 3).png({ palette: true, progressive: true })],
  ])("%s passes", async (_, make) => {
    const png = new Uint8Array(await make().toBuffer());
    await expect(checkImageData(source(png), "png", "the image")).resolves.toBeUndefined();
  });

  it("data inflating past the header is refused (415), the image named", async () => {
    const error = await checkImageData(source(await bomb()), "png", "the watermark image").catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({
      code: "CONTENT_TYPE_UNSUPPORTED",
      message:
        "the watermark image is malformed: its compressed image data inflates beyond the 4 bytes its header declares",
    });
  });

  it("the refusal reads a bounded part of the bomb: the inflate stops, it does not run to the end", async () => {
    // The measure of "fast" that a loaded machine cannot bend: bytes read, not milliseconds.
    const png = await bomb(1024);
    let read = 0;
    const counting = {
      read: async (offset: number, length: number) => {
        const part = png.subarray(offset, offset + length);
        read = Math.max(read, offset + part.byteLength);
        return part;
      },
    };
    await expect(checkImageData(counting, "png", "the image")).rejects.toMatchObject({
      code: "CONTENT_TYPE_UNSUPPORTED",
    });
    console.log(`bomb: ${png.byteLength} bytes (1 GiB inflated); read up to byte ${read}`);
    expect(read).toBeLessThan(png.byteLength / 8);
  });

  it("other formats are not its business", async () => {
    const jpeg = new Uint8Array(await gradient(8, 8, 3).jpeg().toBuffer());
    await expect(checkImageData(source(jpeg), "jpeg", "the image")).resolves.toBeUndefined();
  });
});
