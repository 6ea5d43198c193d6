/** A query string from the defined values only ("" when none): a page's links to itself with other filters. */
export function query(params: Record<string, string | undefined>) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value) search.set(name, value);
  const text = search.toString();
  return text ? `?${text}` : "";
}
