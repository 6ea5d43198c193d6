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

/**
 * A valid image in a coding our decoders cannot read (an arithmetic-coded JPEG, …). `what` names it for the
 * client, with its article: "an arithmetic-coded JPEG".
 */
export class UnsupportedCodingError extends Error {
  override readonly name = "UnsupportedCodingError";
  readonly what: string;

  constructor(what: string) {
    super(`${what} is not supported`);
    this.what = what;
  }
}

/**
 * A valid image that the Worker's codecs would decode only at a cost its memory cannot take (a large CMYK
 * JPEG, which only the pure-JS decoder reads): the caller hands the job to the media engine instead.
 */
export class ForEngineError extends Error {
  override readonly name = "ForEngineError";
}

/**
 * A text mark that cannot be drawn as asked (characters no font covers, or a mark too large to render): the
 * client's to fix, reported as 400 naming `field` ("params.text", "params.font_size"). `message` is public.
 */
export class TextMarkError extends Error {
  override readonly name = "TextMarkError";
  readonly field: string;

  // No parameter property (tsconfig.json's erasableSyntaxOnly): Node runs src/images as plain TypeScript
  // (bench/image-memory.ts), stripping types only.
  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}
