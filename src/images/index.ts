/** In-Worker image processing (image.watermark): WASM and TypeScript codecs, compositing, text marks. */
export { ForEngineError, ImageInputError, TextMarkError } from "./errors";
export { MAX_IMAGE_BYTES, MAX_IMAGE_PIXELS, readImageHeader } from "./header";
export { encodePng } from "./png";
export { defaultFontSize, renderMark, type TextMarkParams } from "./text";
export { watermarkImage } from "./watermark";
