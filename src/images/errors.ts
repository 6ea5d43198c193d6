/**
 * A problem with an input image that the caller should report to the client: not a PNG/JPEG/WebP, truncated or
 * undecodable (→ 415 CONTENT_TYPE_UNSUPPORTED), or over the pixel limit (→ 413 REQUEST_BODY_TOO_LARGE).
 * `message` is public: it names the offending input and never includes internals.
 */
export class ImageInputError extends Error {
  override readonly name = "ImageInputError";
  readonly code: "CONTENT_TYPE_UNSUPPORTED" | "REQUEST_BODY_TOO_LARGE";

  constructor(code: ImageInputError["code"], message: string) {
    super(message);
    this.code = code;
  }
}

/**
 * A decoder refused to produce (or keep producing) output: more pixels than the cap (413), or compressed data
 * that inflates beyond what the image's header declares (415: the file is malformed, whatever its size).
 * `message` completes a sentence that starts with the input's name ("The image …").
 */
export class DecodeLimitError extends Error {
  override readonly name = "DecodeLimitError";
  readonly code: ImageInputError["code"];

  constructor(code: ImageInputError["code"], message: string) {
    super(message);
    this.code = code;
  }
}
