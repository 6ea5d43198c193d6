/**
 * The text-watermark benchmark's Worker (bench/text-watermark.ts): renderTextMark in workerd, alone, so a
 * first request measures a cold isolate (resvg's WASM instantiated, fonts parsed) and later ones a warm one.
 *   PUT /fonts/<key>   stores a font in the local FONTS bucket (the R2 read of a first CJK mark)
 *   GET /mark?text=    renders and answers the PNG's size; GET /noop answers at once (the request's own cost)
 */
import { encodePng } from "../../src/images/png";
import { renderTextMark } from "../../src/text/mark";

type BenchEnv = { FONTS: R2Bucket };

export default {
  async fetch(request: Request, env: BenchEnv): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/noop") return new Response("ok");
    if (url.pathname.startsWith("/fonts/") && request.method === "PUT") {
      await env.FONTS.put(url.pathname.slice("/fonts/".length), request.body);
      return new Response("stored");
    }
    if (url.pathname === "/mark") {
      const image = await renderTextMark({
        text: url.searchParams.get("text") ?? "",
        size: Number(url.searchParams.get("size") ?? 48),
        color: "#ffffff",
        opacity: 0.8,
        fontFamily: "sans",
        fontWeight: "regular",
        stroke: { color: "#000000", width: 2 },
        env,
      });
      if (!image) return new Response("blank", { status: 400 });
      const png = await encodePng(image);
      return new Response(`${image.width}x${image.height} ${png.length}`);
    }
    return new Response("not found", { status: 404 });
  },
};
