import type { AppEnv } from "../http/context";
import type { Session } from "./session";

/** The app's context plus what the dashboard's middleware establishes: CSP nonce, session, CSRF token. */
export type DashboardEnv = {
  Bindings: Env;
  Variables: AppEnv["Variables"] & {
    /** Per-response nonce of the Content-Security-Policy (the inline style and script). */
    nonce: string;
    session: Session;
    /** The CSRF token every form of this session carries. */
    csrf: string;
    /** The parsed body of a POST, after its CSRF token was checked. */
    form: Record<string, string | string[]>;
  };
};
