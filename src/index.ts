import { createApp } from "./app";

export { KeyGate } from "./auth/key-gate";

const app = createApp();

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
