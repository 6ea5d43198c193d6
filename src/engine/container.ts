/**
 * The engine as a Cloudflare Container (production). The image is containers/ffmpeg/Dockerfile; the
 * Worker reaches it through this Durable Object class and `createEngine` (index.ts).
 */
import { Container } from "@cloudflare/containers";

/** The bindings this class reads; the rest of the Worker's Env is not its concern. */
export interface MediaEngineContainerEnv {
  ENGINE_SECRET: string;
  /** Optional overrides passed through to the engine process. */
  ENGINE_SLOTS?: string;
  ENGINE_QUEUE?: string;
  ENGINE_RESERVED_SLOTS?: string;
  ENGINE_TASK_MIN_SLOTS?: string;
}

export class MediaEngineContainer extends Container<MediaEngineContainerEnv> {
  override defaultPort = 8080;
  /** Idle instances stop after this long; a running job keeps renewing it with its requests. */
  override sleepAfter = "10m";
  /** Readiness: the unauthenticated health route of the engine. */
  override pingEndpoint = "container/healthz";

  constructor(ctx: ConstructorParameters<typeof Container>[0], env: MediaEngineContainerEnv) {
    super(ctx, env);
    const vars: Record<string, string> = { ENGINE_SECRET: env.ENGINE_SECRET, PORT: "8080", HOST: "0.0.0.0" };
    if (env.ENGINE_SLOTS !== undefined) vars.ENGINE_SLOTS = env.ENGINE_SLOTS;
    if (env.ENGINE_QUEUE !== undefined) vars.ENGINE_QUEUE = env.ENGINE_QUEUE;
    if (env.ENGINE_RESERVED_SLOTS !== undefined) vars.ENGINE_RESERVED_SLOTS = env.ENGINE_RESERVED_SLOTS;
    if (env.ENGINE_TASK_MIN_SLOTS !== undefined) vars.ENGINE_TASK_MIN_SLOTS = env.ENGINE_TASK_MIN_SLOTS;
    this.envVars = vars;
  }
}
