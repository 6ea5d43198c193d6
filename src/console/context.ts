import type { UserRow } from "../db/schema";
import type { AppEnv } from "../http/context";

/** The app's context plus what the console's middleware establishes. */
export type ConsoleEnv = {
  Bindings: Env;
  Variables: AppEnv["Variables"] & {
    /** Per-response nonce of the Content-Security-Policy (inline style and scripts). */
    nonce: string;
    /** The CSRF token every form of this response carries. */
    csrf: string;
    /** The parsed body of a POST, after its CSRF token was checked. */
    form: Record<string, string | string[]>;
    /** The signed-in user and the stored id of their session (set on every page but sign-in and sign-up). */
    user: UserRow;
    sessionId: string;
    /** What this response's page adds to the Content-Security-Policy (src/console/csp.ts). */
    cspAdditions?: CspAdditions;
  };
};

/** Sources a page adds to the console's Content-Security-Policy, per directive. */
export type CspAdditions = Partial<
  Record<"connect-src" | "worker-src" | "script-src" | "frame-src" | "style-src", string[]>
>;
