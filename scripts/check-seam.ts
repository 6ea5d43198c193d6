/**
 * The seam between the two deployables (docs/decisions.md "One contract"): the Worker (src/) and the media
 * engine (containers/ffmpeg/src) share code only through workspace packages imported by name
 * (`@p6/contract/…`, packages/contract). A relative import that leaves its side — src/ reaching into
 * containers/ or packages/, the engine reaching into src/ or packages/, a package reaching out of itself — is
 * a deep import: the file would be bundled into the other deployable by path, behind the type checker's and
 * the package's back. Tests may cross (they drive one side against the other); the deployables may not.
 *
 *   node scripts/check-seam.ts [root]   # exit 1 and the offending imports when there is one
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** Each side: its source folder and the folders its relative imports must not reach. */
const SIDES = [
  { name: "the Worker", dir: "src", closed: ["containers", "packages"] },
  { name: "the engine", dir: "containers/ffmpeg/src", closed: ["src", "packages"] },
  { name: "@p6/contract", dir: "packages/contract/src", closed: ["src", "containers"] },
];

const SOURCE = /\.(ts|tsx|mts|js|mjs)$/;
/** import … from "x", export … from "x", import "x", import("x"), require("x"): the specifier. */
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)["']([^"']+)["']/g;

function* files(dir: string): Generator<string> {
  let entries: import("node:fs").Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "node_modules") yield* files(full);
    } else if (SOURCE.test(entry.name)) yield full;
  }
}

export type DeepImport = { file: string; line: number; specifier: string; side: string };

/** Every relative import under a side's sources that resolves into a folder closed to that side. */
export function deepImports(root: string): DeepImport[] {
  const found: DeepImport[] = [];
  for (const side of SIDES) {
    const closed = side.closed.map((dir) => path.join(root, dir) + path.sep);
    for (const file of files(path.join(root, side.dir))) {
      const lines = readFileSync(file, "utf8").split("\n");
      lines.forEach((text, i) => {
        const code = text.trimStart();
        // Doc comments may show how another folder imports a file; only code counts.
        if (code.startsWith("*") || code.startsWith("//") || code.startsWith("/*")) return;
        for (const match of text.matchAll(SPECIFIER)) {
          const specifier = match[1]!;
          if (!specifier.startsWith(".")) continue;
          const target = path.resolve(path.dirname(file), specifier);
          if (closed.some((dir) => (target + path.sep).startsWith(dir))) {
            found.push({ file: path.relative(root, file), line: i + 1, specifier, side: side.name });
          }
        }
      });
    }
  }
  return found;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, ".."));
  const found = deepImports(root);
  for (const d of found) {
    console.error(
      `${d.file}:${d.line}: ${d.side} imports "${d.specifier}" across the seam; share it through packages/contract and import @p6/contract/… by name`,
    );
  }
  process.exit(found.length === 0 ? 0 : 1);
}
