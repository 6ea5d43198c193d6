/**
 * Promise.all for a job's concurrent measurements and processes: it settles only once every branch has.
 *
 * Promise.all rejects at the first rejection while the other branches' processes still run; the job then
 * answered and removed its folder under them (an aborted watermark's 504 came before the kill of its
 * other probes had been reaped: lifecycle.test.ts, seen in CI). Joined, a job's failure is answered only
 * once none of its processes is left; the first rejection (in time) is the one thrown.
 */
export async function joinAll<T extends readonly unknown[]>(
  branches: readonly [...T],
): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  let first: { reason: unknown } | null = null;
  const settled = await Promise.all(
    branches.map((b) =>
      Promise.resolve(b).catch((reason: unknown) => {
        first ??= { reason };
        return undefined;
      }),
    ),
  );
  if (first !== null) throw (first as { reason: unknown }).reason;
  return settled as { -readonly [K in keyof T]: Awaited<T[K]> };
}
