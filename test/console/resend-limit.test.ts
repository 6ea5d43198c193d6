import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { webhookDeliveries } from "../../src/db/schema";
import { csrfOf } from "../dashboard/client";
import { db } from "../helpers/api";
import { insertTask } from "../helpers/tasks";
import { signedUp } from "./support";

/** Issue 40: webhook resends were limited per task only (20 tasks gave 60 signed deliveries to one URL). */

const accountOf = async (email: string) =>
  (await env.DB.prepare("SELECT account_id FROM users WHERE email = ?")
    .bind(email.toLowerCase())
    .first<{ account_id: string }>())!.account_id;

describe("webhook resends are limited per account as well as per task", () => {
  it("20 tasks' resends, 3 each at once, make at most 10 deliveries to the one URL", async () => {
    const { client, email } = await signedUp();
    const accountId = await accountOf(email);
    const url = "http://127.0.0.1:9/flood";
    const tasks = [];
    for (let i = 0; i < 20; i++) {
      const task = await insertTask(accountId, { status: "succeeded", webhookUrl: url });
      await db()
        .insert(webhookDeliveries)
        .values({
          id: `msg_${task.id}`,
          taskId: task.id,
          accountId,
          event: "completed",
          url,
          body: "{}",
          status: "delivered",
          attemptCount: 1,
          nextAttemptAt: null,
          createdAt: Date.now(),
          completedAt: Date.now(),
        });
      tasks.push(task);
    }
    const token = csrfOf(await (await client.get("/console/webhooks")).text());
    const answers = await Promise.all(
      tasks.flatMap((task) =>
        [1, 2, 3].map(() => client.post("/console/webhooks/resend", { _csrf: token, task_id: task.id })),
      ),
    );
    // Accepted: to the task page with ?done=resent; refused: back to the webhooks page, which says why.
    const to = answers.map((r) => (r.status === 303 ? r.headers.get("location") : `HTTP ${r.status}`));
    expect(to.filter((l) => l?.endsWith("?done=resent"))).toHaveLength(10);
    expect(to.filter((l) => l === "/console/webhooks")).toHaveLength(50);
    const made = await env.DB.prepare(
      "SELECT count(*) AS n FROM webhook_deliveries WHERE account_id = ? AND id NOT LIKE 'msg_' || task_id",
    )
      .bind(accountId)
      .first<{ n: number }>();
    expect(made!.n).toBe(10);
    expect(await (await client.get("/console/webhooks")).text()).toMatch(
      /resent (3 times|10 webhook events) in the last minute\. Nothing was sent; try again in \d+ s\./,
    );
  });
});
