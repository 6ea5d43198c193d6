import { env } from "cloudflare:test";
import { signFileUrl } from "../../src/files/signing";
import { storeFile } from "../../src/files/store";
import { BASE, db, newAccount } from "../helpers/api";

export const SECRET = "test-file-signing-secret";
/** 1000 bytes whose values tell their offsets apart. */
export const bytes = new Uint8Array(1000).map((_, i) => i % 251);

/** A file stored through the domain layer, and the path of its signed URL. */
export async function stored(options: { expiresAt?: number; name?: string; body?: Uint8Array } = {}) {
  const { accountId } = await newAccount();
  const now = Date.now();
  const body = options.body ?? bytes;
  const file = await storeFile(db(), env.FILES, {
    accountId,
    requestId: "01JD5Z8X4QK3M7R2T9V6W1Y0AB",
    name: options.name ?? "out.bin",
    contentType: "video/mp4",
    body: body.byteLength > 0 ? new Blob([body]).stream() : body,
    sizeBytes: body.byteLength,
    expiresAt: options.expiresAt ?? now + 3_600_000,
    now,
  });
  const url = await signFileUrl(BASE, SECRET, file.id, file.name, file.expiresAt);
  return { file, path: url.slice(BASE.length) };
}
