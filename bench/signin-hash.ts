import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import type { Service } from "./lib/service.ts";
import { sized } from "./lib/smoke.ts";

const RUNS = sized(21, 2);
const PASSWORD = "bench password, long enough";

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** The workerd processes of the service (they run the Worker), found among this process's descendants. */
function workerdPids() {
  const parent = new Map<number, number>();
  const names = new Map<number, string>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const close = stat.lastIndexOf(")");
      names.set(Number(entry), stat.slice(stat.indexOf("(") + 1, close));
      parent.set(Number(entry), Number(stat.slice(close + 2).split(" ")[1]));
    } catch {}
  }
  const descends = (pid: number): boolean => {
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p))
      if (p === process.pid) return true;
    return false;
  };
  return [...names].filter(([pid, name]) => name.startsWith("workerd") && descends(pid)).map(([pid]) => pid);
}

/** On-CPU nanoseconds of every thread of the given processes (schedstat: nanosecond resolution). */
function cpuNs(pids: number[]) {
  let total = 0;
  for (const pid of pids) {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      try {
        total += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
      } catch {}
    }
  }
  return total;
}

/** The console form's CSRF token and the pre-session cookie it is bound to. */
async function form(base: string) {
  const page = await fetch(`${base}/console/sign-in`);
  const cookie = page.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())![1]!;
  return { cookie, csrf };
}

/**
 * signin-hash: the CPU time one password sign-in costs the Worker (workerd's on-CPU time, read from /proc
 * around each request), less that of rendering the sign-in page alone; the difference is the password hash
 * (scrypt, src/users/password.ts) and the session's insert. p50 of 21 of each.
 */
export async function signinHash(service: Service) {
  const pids = workerdPids();
  if (pids.length === 0) {
    console.log("signin-hash: (no workerd process found under this one; not measured)");
    return;
  }
  const email = `bench-${randomUUID().slice(0, 8)}@example.com`;
  const signUp = await form(service.base);
  await fetch(`${service.base}/console/sign-up`, {
    method: "POST",
    redirect: "manual",
    headers: {
      Cookie: signUp.cookie,
      Origin: service.base,
      "Content-Type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({ _csrf: signUp.csrf, email, password: PASSWORD }),
  });
  const measure = async (request: () => Promise<Response>) => {
    const before = cpuNs(pids);
    const response = await request();
    await response.arrayBuffer();
    return { ms: (cpuNs(pids) - before) / 1e6, status: response.status };
  };
  const page: number[] = [];
  const signIn: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const { cookie, csrf } = await form(service.base);
    page.push(
      (await measure(() => fetch(`${service.base}/console/sign-in`, { headers: { Cookie: cookie } }))).ms,
    );
    const result = await measure(() =>
      fetch(`${service.base}/console/sign-in`, {
        method: "POST",
        redirect: "manual",
        headers: {
          Cookie: cookie,
          Origin: service.base,
          "Content-Type": "application/x-www-form-urlencoded",
        },
        body: new URLSearchParams({ _csrf: csrf, email, password: PASSWORD }),
      }),
    );
    if (result.status !== 303) throw new Error(`sign-in answered ${result.status}`);
    signIn.push(result.ms);
  }
  const hash = median(signIn) - median(page);
  console.log(
    `signin-hash: ${hash.toFixed(1)} ms p50 CPU (sign-in ${median(signIn).toFixed(1)} ms, the page alone ${median(page).toFixed(1)} ms; scrypt N=2^14 r=8 p=1)`,
  );
}
