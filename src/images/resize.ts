import RESIZE_WASM from "@jsquash/resize/lib/resize/pkg/squoosh_resize_bg.wasm?module";
import type { Rgba } from "./rgba";

/**
 * Lanczos3 resampling with @jsquash/resize's WASM (squoosh's resize crate), premultiplied so transparent
 * pixels do not bleed colour into the edges. Driven directly rather than through the package's wrapper, whose
 * single module-wide instance would keep memory grown on a large logo for the life of the isolate; here an
 * instance that grew past KEEP_INSTANCE_MAX_BYTES is dropped after the call.
 */

type ResizeExports = {
  memory: WebAssembly.Memory;
  resize(
    retptr: number,
    ptr: number,
    len: number,
    inWidth: number,
    inHeight: number,
    outWidth: number,
    outHeight: number,
    method: number,
    premultiply: number,
    linearRgb: number,
  ): void;
  __wbindgen_add_to_stack_pointer(delta: number): number;
  __wbindgen_malloc(size: number, align: number): number;
  __wbindgen_free(ptr: number, size: number, align: number): void;
};

const LANCZOS3 = 3;
const KEEP_INSTANCE_MAX_BYTES = 32 * 1024 * 1024;
let cached: ResizeExports | undefined;

export function resizeImage(image: Rgba, width: number, height: number): Rgba {
  const wasm =
    cached ?? (new WebAssembly.Instance(RESIZE_WASM, { wbg: {} }).exports as unknown as ResizeExports);
  cached = wasm;
  const retptr = wasm.__wbindgen_add_to_stack_pointer(-16);
  try {
    const input = wasm.__wbindgen_malloc(image.data.length, 1);
    new Uint8Array(wasm.memory.buffer).set(image.data, input); // ownership passes to the resize call
    wasm.resize(retptr, input, image.data.length, image.width, image.height, width, height, LANCZOS3, 1, 0);
    const [ptr, len] = new Int32Array(wasm.memory.buffer, retptr, 2);
    const data = new Uint8ClampedArray(wasm.memory.buffer, ptr!, len!).slice();
    wasm.__wbindgen_free(ptr!, len!, 1);
    return { data, width, height };
  } finally {
    wasm.__wbindgen_add_to_stack_pointer(16);
    if (wasm.memory.buffer.byteLength > KEEP_INSTANCE_MAX_BYTES) cached = undefined;
  }
}
