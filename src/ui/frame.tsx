import type { Child } from "hono/jsx";
import { useContext } from "hono/jsx";
import { PageContext, PostForm } from "./components";
import { COPY_SCRIPT, STYLESHEET } from "./style";

/** The head of every page (dashboard, console, dev mailbox): viewport for phones, the inline stylesheet by nonce. */
export function PageHead(props: { title: string }) {
  const page = useContext(PageContext);
  return (
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <meta name="referrer" content="same-origin" />
      <link rel="icon" href="data:," />
      <title>{props.title}</title>
      <style nonce={page.nonce} dangerouslySetInnerHTML={{ __html: STYLESHEET }} />
    </head>
  );
}

/**
 * The frame of every page of the dashboard, the console and the dev mailbox: header with the brand, what the signed-in user
 * sees there (`bar`) and sign-out, the page, the copy script.
 */
export function Frame(props: {
  title: string;
  brand: string;
  home: string;
  signOut: string;
  bar?: Child;
  children: Child;
}) {
  const page = useContext(PageContext);
  return (
    <html lang="en">
      <PageHead title={`${props.title} · ${props.brand}`} />
      <body>
        <header class="top">
          <div class="bar">
            <a class="brand" href={props.home}>
              {props.brand}
            </a>
            {page.signedIn ? (
              <>
                {props.bar}
                <PostForm action={props.signOut} class="inline">
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
