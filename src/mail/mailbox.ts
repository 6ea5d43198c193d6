import { ulid } from "ulid";

/**
 * The local mailbox (MAIL_TRANSPORT=mailbox): each message a JSON object in the FILES bucket under
 * `dev-mailbox/`, newest first by its ULID. `npm run dev` persists the bucket in P6_STATE_DIR, so the mail stays
 * across restarts; /dev/mailbox (src/routes/dev) lists and shows it on loopback only.
 */
export type StoredMail = {
  id: string;
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  sentAt: string;
};

const PREFIX = "dev-mailbox/";
const ID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

type Bucket = Pick<Env, "FILES">;

/** ULIDs sort by time; this turns them newest-first under R2's ascending listing. */
const MAX_TIME = 2 ** 48;
const keyOf = (id: string, now: number) => `${PREFIX}${(MAX_TIME - now).toString().padStart(15, "0")}-${id}`;

export async function storeInMailbox(env: Bucket, mail: Omit<StoredMail, "id" | "sentAt">, now: number) {
  const id = ulid(now);
  const stored: StoredMail = { id, sentAt: new Date(now).toISOString(), ...mail };
  await env.FILES.put(keyOf(id, now), JSON.stringify(stored), {
    httpMetadata: { contentType: "application/json" },
    customMetadata: { id },
  });
  return stored;
}

/** The newest `limit` messages, newest first (to one address when `to` is given). */
export async function listMailbox(env: Bucket, options: { to?: string; limit?: number } = {}) {
  const listed = await env.FILES.list({ prefix: PREFIX, limit: 1000 });
  const mails: StoredMail[] = [];
  for (const object of listed.objects) {
    const body = await env.FILES.get(object.key);
    if (!body) continue;
    const mail = (await body.json()) as StoredMail;
    if (options.to && mail.to !== options.to) continue;
    mails.push(mail);
    if (mails.length >= (options.limit ?? 100)) break;
  }
  return mails;
}

export async function readMailbox(env: Bucket, id: string) {
  if (!ID.test(id)) return undefined;
  const listed = await env.FILES.list({ prefix: PREFIX, limit: 1000 });
  const object = listed.objects.find((o) => o.key.endsWith(`-${id}`));
  const body = object ? await env.FILES.get(object.key) : null;
  return body ? ((await body.json()) as StoredMail) : undefined;
}
