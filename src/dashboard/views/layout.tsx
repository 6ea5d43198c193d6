import type { Child } from "hono/jsx";
import { Frame } from "../../ui/frame";
import { paths } from "../paths";

/** The dashboard's frame: the accounts link beside sign-out. */
export function Layout(props: { title: string; children: Child }) {
  return (
    <Frame
      title={props.title}
      brand="p6 operator"
      home={paths.accounts}
      signOut={paths.logout}
      bar={
        <nav>
          <a href={paths.accounts}>Accounts</a>
        </nav>
      }
    >
      {props.children}
    </Frame>
  );
}
