/** Every console URL, built in one place so views and handlers never disagree. */
export const CONSOLE = "/console";

export const consolePaths = {
  overview: CONSOLE,
  signUp: `${CONSOLE}/sign-up`,
  signIn: `${CONSOLE}/sign-in`,
  signInPasskey: `${CONSOLE}/sign-in/passkey`,
  signOut: `${CONSOLE}/sign-out`,
  signOutEverywhere: `${CONSOLE}/sign-out-everywhere`,
  welcome: `${CONSOLE}/welcome`,
  verify: `${CONSOLE}/verify`,
  resendVerification: `${CONSOLE}/verify/resend`,
  reset: `${CONSOLE}/reset`,
  resetNew: `${CONSOLE}/reset/new`,
  keys: `${CONSOLE}/keys`,
  revokeKey: (keyId: string) => `${CONSOLE}/keys/${keyId}/revoke`,
  webhooks: `${CONSOLE}/webhooks`,
  revealSecret: `${CONSOLE}/webhooks/reveal`,
  rotateSecret: `${CONSOLE}/webhooks/rotate`,
  resend: `${CONSOLE}/webhooks/resend`,
  tasks: `${CONSOLE}/tasks`,
  task: (taskId: string) => `${CONSOLE}/tasks/${taskId}`,
  requests: `${CONSOLE}/requests`,
  usage: `${CONSOLE}/usage`,
  credits: `${CONSOLE}/credits`,
  security: `${CONSOLE}/security`,
  password: `${CONSOLE}/security/password`,
  passkeys: `${CONSOLE}/security/passkeys`,
  removePasskey: (id: string) => `${CONSOLE}/security/passkeys/${id}/remove`,
  webauthnScript: `${CONSOLE}/assets/webauthn.js`,
  altchaScript: `${CONSOLE}/assets/altcha.js`,
  altchaStyle: `${CONSOLE}/assets/altcha.css`,
  altchaWorker: `${CONSOLE}/assets/altcha-pbkdf2.js`,
  passwordStrength: `${CONSOLE}/password-strength`,
  uploads: `${CONSOLE}/uploads`,
  grantUpload: `${CONSOLE}/uploads/direct`,
  deleteUpload: (uploadId: string) => `${CONSOLE}/uploads/${uploadId}/delete`,
  uppyScript: `${CONSOLE}/assets/uppy.js`,
  uppyStyles: `${CONSOLE}/assets/uppy.css`,
  uploadsScript: `${CONSOLE}/assets/uploads-page.js`,
};

/** Where to go after signing in: only a console path of this origin, never an open redirect. */
export function safeConsoleNext(next: string | undefined) {
  if (!next || !/^\/console(\/[\w\-./?=&%]*)?$/.test(next) || next.includes("//"))
    return consolePaths.overview;
  return next;
}
