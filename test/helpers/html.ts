/** The visible text of an HTML page: tags dropped, entities decoded, whitespace collapsed. */
export function textOf(html: string) {
  return html
    .replace(/<(style|script)[^>]*>[\s\S]*?<\/\1>/g, "")
    .replace(/<[^>]+>/g, " ")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ")
    .replace(/ ([.,;:)])/g, "$1");
}

/** A Content-Security-Policy header as directive → sources. */
export function cspDirectives(header: string | null) {
  return Object.fromEntries(
    (header ?? "")
      .split(";")
      .map((part) => part.trim().split(/\s+/))
      .filter((words) => words[0])
      .map(([name, ...sources]) => [name!, sources]),
  ) as Record<string, string[] | undefined>;
}

/** The CSP hash source of each inline <style> of a page. */
export async function styleHashes(html: string) {
  const styles = [...html.matchAll(/<style[^>]*>([\s\S]*?)<\/style>/g)].map((match) => match[1]!);
  return Promise.all(
    styles.map(async (css) => {
      const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(css));
      return `'sha256-${btoa(String.fromCharCode(...new Uint8Array(digest)))}'`;
    }),
  );
}
