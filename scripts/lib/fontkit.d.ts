/** fontkit ships no types; scripts/lib/emoji-pack.ts reads its parsed tables as untyped data. */
declare module "fontkit" {
  export function create(buffer: Uint8Array): unknown;
}
