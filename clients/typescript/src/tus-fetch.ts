/**
 * A tus-js-client HTTP stack on fetch, for runtimes with fetch but no XMLHttpRequest (Cloudflare Workers, service
 * workers). Written here because tus-js-client 4.3.1, its latest release, ships only XMLHttpRequest and node:http
 * stacks (a fetch stack is merged for its next major, tus/tus-js-client#751).
 * fetch reports no upload progress: a PATCH's bytes count once its answer arrives.
 */
export class FetchHttpStack {
  createRequest(method: string, url: string): FetchHttpRequest {
    return new FetchHttpRequest(method, url);
  }

  getName(): string {
    return "FetchHttpStack";
  }
}

class FetchHttpRequest {
  readonly method: string;
  readonly url: string;
  readonly #headers: Record<string, string> = {};
  readonly #abort = new AbortController();

  constructor(method: string, url: string) {
    this.method = method;
    this.url = url;
  }

  getMethod(): string {
    return this.method;
  }

  getURL(): string {
    return this.url;
  }

  setHeader(name: string, value: string): void {
    this.#headers[name] = value;
  }

  getHeader(name: string): string | undefined {
    return this.#headers[name];
  }

  setProgressHandler(_handler: (bytesSent: number) => void): void {}

  /** The body is what tus-js-client's browser sources give: a Blob slice or bytes (never a stream). */
  async send(body: Blob | Uint8Array<ArrayBuffer> | null = null): Promise<FetchHttpResponse> {
    const response = await fetch(this.url, {
      method: this.method,
      headers: this.#headers,
      body,
      signal: this.#abort.signal,
    });
    return new FetchHttpResponse(response, await response.text());
  }

  async abort(): Promise<void> {
    this.#abort.abort();
  }

  getUnderlyingObject(): AbortController {
    return this.#abort;
  }
}

class FetchHttpResponse {
  readonly response: Response;
  readonly body: string;

  constructor(response: Response, body: string) {
    this.response = response;
    this.body = body;
  }

  getStatus(): number {
    return this.response.status;
  }

  getHeader(name: string): string | undefined {
    return this.response.headers.get(name) ?? undefined;
  }

  getBody(): string {
    return this.body;
  }

  getUnderlyingObject(): Response {
    return this.response;
  }
}
