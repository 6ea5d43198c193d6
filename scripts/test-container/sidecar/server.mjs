// The part of cloudflare/proxy-everything that workerd's local container support uses for ingress (observed
// by running it; not a documented interface):
//  - started with `--http-ingress-address <host:port>`; the app container shares this container's network;
//  - `CONNECT` with `X-Dst-Addr: 127.0.0.1:<port>`: a tunnel to the app's port;
//  - `PUT /egress` (egress rules) and `GET /ca` (the CA it would intercept TLS with, PEM).
// Egress interception is not reproduced: the app's own connections go straight out.
import { readFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";

const flag = process.argv.indexOf("--http-ingress-address");
const address = flag > 0 ? process.argv[flag + 1] : "0.0.0.0:39001";
const [host, port] = [
  address.slice(0, address.lastIndexOf(":")),
  Number(address.slice(address.lastIndexOf(":") + 1)),
];
const ca = readFileSync(new URL("./ca.pem", import.meta.url));

const server = http.createServer((req, res) => {
  console.log(`${req.method} ${req.url}`);
  if (req.method === "GET" && req.url === "/ca") {
    res.writeHead(200, { "content-type": "application/x-pem-file" }).end(ca);
    return;
  }
  req.resume();
  req.on("end", () => res.writeHead(req.method === "PUT" ? 200 : 404).end());
});

server.on("connect", (req, client, head) => {
  const target = String(req.headers["x-dst-addr"] ?? req.url ?? "");
  const at = target.lastIndexOf(":");
  const upstream = net.connect(Number(target.slice(at + 1)), target.slice(0, at).replace(/^\[|\]$/g, ""));
  upstream.on("connect", () => {
    client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    if (head.length > 0) upstream.write(head);
    upstream.pipe(client);
    client.pipe(upstream);
  });
  const close = () => {
    upstream.destroy();
    client.destroy();
  };
  upstream.on("error", () => {
    if (!client.writableEnded) client.end("HTTP/1.1 502 Bad Gateway\r\n\r\n");
    close();
  });
  client.on("error", close);
  client.on("close", close);
});

server.listen(port, host, () => console.log(`sidecar stand-in listening on ${address}`));
process.on("SIGTERM", () => process.exit(0));
