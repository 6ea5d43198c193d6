import { createApp } from "./app";

export { RateLimiter } from "./ratelimit/limiter";

const app = createApp();

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
