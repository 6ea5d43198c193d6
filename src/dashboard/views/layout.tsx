import type { Child } from "hono/jsx";
import { useContext } from "hono/jsx";
import { paths } from "../paths";
import { PageContext, PostForm } from "./components";
import { COPY_SCRIPT, STYLESHEET } from "./style";

/** The frame of every page: header with navigation and sign-out (when signed in), the page, the copy script. */
export function Layout(props: { title: string; children: Child }) {
  const page = useContext(PageContext);
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="same-origin" />
        <link rel="icon" href="data:," />
        <title>{`${props.title} · p6 operator`}</title>
        <style nonce={page.nonce} dangerouslySetInnerHTML={{ __html: STYLESHEET }} />
      </head>
      <body>
        <header class="top">
          <div class="bar">
            <a class="brand" href={paths.accounts}>
              p6 operator
            </a>
            {page.signedIn ? (
              <>
                <nav>
                  <a href={paths.accounts}>Accounts</a>
                </nav>
                <PostForm action={paths.logout} class="inline">
                  <button type="submit" class="secondary">
                    Sign out
                  </button>
                </PostForm>
              </>
            ) : null}
          </div>
        </header>
        <main>{props.children}</main>
        <script nonce={page.nonce} dangerouslySetInnerHTML={{ __html: COPY_SCRIPT }} />
      </body>
    </html>
  );
}
