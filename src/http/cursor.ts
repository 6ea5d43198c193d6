import { base64UrlDecode, base64UrlEncode } from "../util/encoding";
import { isUlid } from "../util/ulid";

/** Opaque keyset cursor of the ULID-keyed listings: base64url("t1:<id of the last row on the page>"). */
export function encodeCursor(lastId: string) {
  return base64UrlEncode(`t1:${lastId}`);
}

/** The id the next page starts below, or null when the cursor was not made by us. */
export function decodeCursor(cursor: string): string | null {
  const text = base64UrlDecode(cursor);
  if (!text?.startsWith("t1:")) return null;
  const id = text.slice(3);
  return isUlid(id) ? id : null;
}
