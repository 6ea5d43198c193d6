/**
 * A loopback stand-in for a DNS-over-HTTPS resolver (Cloudflare's JSON form: GET ?name=&type=A|AAAA with
 * Accept: application/dns-json): the public internet's resolvers lie outside the system, so the Worker's
 * webhook lookups (src/fetch/doh.ts) are answered from the same fixed table the engine's tests resolve with
 * (containers/ffmpeg/test/support/dns.ts). Names not in the table are NXDOMAIN; `servfail.test` answers
 * SERVFAIL. Every question is counted, so a test can tell whether a name was looked up.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { TEST_DNS } from "../../containers/ffmpeg/test/support/dns.ts";

const TYPES = { A: { code: 1, family: 4 }, AAAA: { code: 28, family: 6 } } as const;

export async function startDohServer() {
  const asked: string[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://doh.test");
    if (url.pathname === "/_asked") {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(asked));
      return;
    }
    const name = (url.searchParams.get("name") ?? "").toLowerCase();
    const type = url.searchParams.get("type") as keyof typeof TYPES | null;
    if (url.pathname !== "/dns-query" || type === null || !(type in TYPES)) {
      res.writeHead(400).end();
      return;
    }
    asked.push(`${name} ${type}`);
    const json = (body: unknown) =>
      res.writeHead(200, { "content-type": "application/dns-json" }).end(JSON.stringify(body));
    if (name === "servfail.test") return json({ Status: 2 });
    const records = TEST_DNS[name];
    if (records === undefined) return json({ Status: 3, Question: [{ name, type: TYPES[type].code }] });
    const { code, family } = TYPES[type];
    json({
      Status: 0,
      Question: [{ name, type: code }],
      Answer: records
        .filter((r) => r.family === family)
        .map((r) => ({ name, type: code, TTL: 60, data: r.address })),
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/dns-query`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
