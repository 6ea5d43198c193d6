import type { Mail } from "./send";

const escapeHtml = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/**
 * The link carries the token in its fragment (`#token=…`), which a browser never sends: it stays out of every
 * request line, access log and Referer, and a mail scanner that fetches links spends nothing. The page's script
 * moves it into the form; without script the mail's code is pasted into the same field.
 */
const linkTo = (origin: string, path: string, token: string) => `${origin}${path}#token=${token}`;

function layout(paragraphs: string[], link: string, action: string, token: string) {
  return `<!doctype html><html><body style="font-family:system-ui,sans-serif;line-height:1.5">${paragraphs
    .map((p) => `<p>${escapeHtml(p)}</p>`)
    .join(
      "",
    )}<p><a href="${escapeHtml(link)}">${escapeHtml(action)}</a></p><p>Or paste this code on the page: <code>${escapeHtml(
    token,
  )}</code></p></body></html>`;
}

export function verificationMail(input: {
  origin: string;
  to: string;
  token: string;
  credits: number;
}): Mail {
  const link = linkTo(input.origin, "/console/verify", input.token);
  const credits =
    input.credits > 0 ? `Once it is verified, your account gets its ${input.credits} sign-up credits.` : "";
  const lines = [
    "Confirm that this address is yours to finish setting up your p6 media API account.",
    ...(credits ? [credits] : []),
    "The link works once, for 24 hours. If you did not sign up, ignore this mail.",
  ];
  return {
    to: input.to,
    subject: "Verify your email for p6 media API",
    text: `${lines.join("\n\n")}\n\nVerify your email: ${link}\n\nOr paste this code on the page: ${input.token}\n`,
    html: layout(lines, link, "Verify your email", input.token),
  };
}

export function resetMail(input: { origin: string; to: string; token: string }): Mail {
  const link = linkTo(input.origin, "/console/reset/new", input.token);
  const lines = [
    "Someone (we hope you) asked to reset the password of your p6 media API account.",
    "The link works once, for 1 hour, and signs out every session of your account. If you did not ask, ignore this mail: your password stays as it is.",
  ];
  return {
    to: input.to,
    subject: "Reset your p6 media API password",
    text: `${lines.join("\n\n")}\n\nChoose a new password: ${link}\n\nOr paste this code on the page: ${input.token}\n`,
    html: layout(lines, link, "Choose a new password", input.token),
  };
}
