import type { Child } from "hono/jsx";
import { useContext } from "hono/jsx";
import { PageContext } from "../../ui/components";
import { Frame } from "../../ui/frame";
import { consolePaths } from "../paths";

const NAV = [
  ["overview", "Overview", consolePaths.overview],
  ["keys", "API keys", consolePaths.keys],
  ["webhooks", "Webhooks", consolePaths.webhooks],
  ["tasks", "Tasks", consolePaths.tasks],
  ["uploads", "Uploads", consolePaths.uploads],
  ["requests", "Request log", consolePaths.requests],
  ["usage", "Usage", consolePaths.usage],
  ["credits", "Credits", consolePaths.credits],
  ["security", "Security", consolePaths.security],
] as const;

export type ConsoleTab = (typeof NAV)[number][0];

/** The console's frame, the dashboard's with the user's email and, when signed in, the account's tabs. */
export function ConsoleLayout(props: { title: string; tab?: ConsoleTab; email?: string; children: Child }) {
  const page = useContext(PageContext);
  return (
    <Frame
      title={props.title}
      brand="p6 console"
      home={consolePaths.overview}
      signOut={consolePaths.signOut}
      bar={<span class="muted small">{props.email}</span>}
    >
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
    </Frame>
  );
}
