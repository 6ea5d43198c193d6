import { stripVTControlCharacters } from "node:util";

/** The first line of a block wrangler dev prints again and again: its bindings table, its containers list. */
const BLOCK_START =
  /^(?:Your Worker has access to the following bindings:|The following containers are available:)/;
/** Printed before each reprint, when the machine's dev registry changes. */
const STATUS = /^⎔ Connection status updated$/;

/**
 * `wrangler dev` prints its bindings table (and the containers list after it) at start, then again with
 * "⎔ Connection status updated" whenever the machine's dev registry changes: its own Worker registering, and
 * any other `wrangler dev` or test on the machine starting or stopping (three tables at start on a busy
 * machine, another on each). A block identical to the one last printed, and the status line announcing it,
 * are left out; a block that changed is printed. Returns a filter: each line of wrangler's output in, the
 * lines to print now out (a block is held until its blank last line). No option of wrangler's does this.
 */
export function onceTables(): { feed(line: string): string[]; flush(): string[] } {
  const printed = new Map<string, string>();
  let held: string[] = [];
  let block: string[] | undefined;
  return {
    feed(line) {
      const text = stripVTControlCharacters(line).trim();
      if (block !== undefined) {
        block.push(line);
        if (text !== "") return [];
        const title = stripVTControlCharacters(block[0]!).trim();
        const body = block.map((l) => stripVTControlCharacters(l).trimEnd()).join("\n");
        const out = printed.get(title) === body ? [] : [...held, ...block];
        printed.set(title, body);
        held = [];
        block = undefined;
        return out;
      }
      if (BLOCK_START.test(text)) {
        block = [line];
        return [];
      }
      if (STATUS.test(text)) {
        held.push(line);
        return [];
      }
      const out = [...held, line];
      held = [];
      return out;
    },
    flush() {
      const out = [...held, ...(block ?? [])];
      held = [];
      block = undefined;
      return out;
    },
  };
}
