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
    const accepted = answers.filter((r) => r.status === 303).length;
    expect(accepted).toBe(10);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(50);
    const made = await env.DB.prepare(
      "SELECT count(*) AS n FROM webhook_deliveries WHERE account_id = ? AND id NOT LIKE 'msg_' || task_id",
    )
      .bind(accountId)
      .first<{ n: number }>();
    expect(made!.n).toBe(10);
    const refused = answers.find((r) => r.status === 429)!;
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  });
});
