import type { Child } from "hono/jsx";
import { useContext } from "hono/jsx";
import { PageContext, PostForm } from "../../dashboard/views/components";
import { COPY_SCRIPT, STYLESHEET } from "../../dashboard/views/style";
import { consolePaths } from "../paths";

const NAV = [
  ["overview", "Overview", consolePaths.overview],
  ["keys", "API keys", consolePaths.keys],
  ["webhooks", "Webhooks", consolePaths.webhooks],
  ["tasks", "Tasks", consolePaths.tasks],
  ["credits", "Credits", consolePaths.credits],
  ["security", "Security", consolePaths.security],
] as const;

export type ConsoleTab = (typeof NAV)[number][0];

/** The console's frame, in the dashboard's style: brand, the account's tabs and sign-out when signed in. */
export function ConsoleLayout(props: { title: string; tab?: ConsoleTab; email?: string; children: Child }) {
  const page = useContext(PageContext);
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="same-origin" />
        <link rel="icon" href="data:," />
        <title>{`${props.title} · p6 console`}</title>
        <style nonce={page.nonce} dangerouslySetInnerHTML={{ __html: STYLESHEET }} />
      </head>
      <body>
        <header class="top">
          <div class="bar">
            <a class="brand" href={consolePaths.overview}>
              p6 console
            </a>
            {page.signedIn ? (
              <>
                <span class="muted small">{props.email}</span>
                <PostForm action={consolePaths.signOut} class="inline">
                  <button type="submit" class="secondary">
                    Sign out
                  </button>
                </PostForm>
              </>
            ) : null}
          </div>
        </header>
        <main>
          {page.signedIn ? (
            <nav class="tabs" aria-label="Console">
              {NAV.map(([tab, label, href]) => (
                <a href={href} aria-current={tab === props.tab ? "page" : undefined}>
                  {label}
                </a>
              ))}
            </nav>
          ) : null}
          {props.children}
        </main>
        <script nonce={page.nonce} dangerouslySetInnerHTML={{ __html: COPY_SCRIPT }} />
      </body>
    </html>
  );
}
