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
