/** Values the worker project's global setup (test/global-setup.ts, in Node) provides to the workerd tests. */
import "vitest";

declare module "vitest" {
  export interface ProvidedContext {
    engineSecret: string;
    engineUrl: string;
    /**
     * Engine processes with one slot and no queue, which the capacity tests saturate on purpose: one per file,
     * since the worker project runs two files at a time.
     */
    smallEngines: { tasksCapacity: string; engineCapacity: string; scaleOut: [string, string] };
    mediaBase: string;
    /** A production-mode engine whose DNS is test/support/resolver-engine.ts TEST_DNS. */
    resolverEngineUrl: string;
    inspectorUrl: string;
    /** Loopback webhook endpoint (test/support/webhook-receiver.ts): /_script/<path>, /_received/<path>. */
    webhookReceiverUrl: string;
    /** DNS-over-HTTPS stand-in (test/support/doh-server.ts) answering from containers/ffmpeg/test/support/dns.ts. */
    dohUrl: string;
    /** The answer validator (test/support/answers.ts): answers checked against the OpenAPI documents. */
    answersUrl: string;
  }
}
