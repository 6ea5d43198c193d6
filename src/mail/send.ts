import type { Config } from "../config/config";
import { storeInMailbox } from "./mailbox";

/** One message to one person: a plain-text body and the same in HTML. */
export type Mail = { to: string; subject: string; text: string; html: string };

type MailEnv = Pick<Env, "EMAIL" | "FILES">;

/**
 * Sends console mail. In production through Cloudflare Email Service's `send_email` binding (`EMAIL`, the
 * structured `send({ from, to, subject, text, html })` form, from MAIL_FROM, which the binding's
 * allowed_sender_addresses also names); with MAIL_TRANSPORT=mailbox (npm run dev, the tests) into the local
 * mailbox that /dev/mailbox shows. Nothing of a message (its link above all) is logged either way.
 */
export async function sendMail(env: MailEnv, config: Pick<Config, "mailTransport" | "mailFrom">, mail: Mail) {
  if (config.mailTransport === "mailbox") {
    await storeInMailbox(env, { ...mail, from: config.mailFrom }, Date.now());
    return;
  }
  await env.EMAIL.send({
    from: { email: config.mailFrom, name: "p6 media API" },
    to: mail.to,
    subject: mail.subject,
    text: mail.text,
    html: mail.html,
  });
}
