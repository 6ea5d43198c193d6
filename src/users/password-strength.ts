import { ZxcvbnFactory } from "@zxcvbn-ts/core";
import { adjacencyGraphs, dictionary as commonDictionary } from "@zxcvbn-ts/language-common";
import { dictionary as englishDictionary, translations } from "@zxcvbn-ts/language-en";

/**
 * zxcvbn's score, 0–4: 3 is "safely unguessable", the least a new password must reach. `qwertyuiopas` scores 1,
 * `correcthorse` 1, `abcabcabcabc` 0, `Summer2026!!` 2, `monkey dragon` 0.
 */
export const MIN_SCORE = 3;

/**
 * Guesses each score starts at. zxcvbn's own thresholds put 3 at 10^8; we put it at 10^9. Its model charges a
 * password made of two common tokens exactly 10^8 (its per-token penalty, 10^4 per extra token, outweighs the
 * tokens themselves): `Summer2026!!`, `Winter2025!!` and `sunshine football` all score 3 at 10^8.0 with the
 * English dictionaries, and are the first guesses of any attacker (issue 40). Every passphrase of three or more
 * uncommon words, and random strings of 12, land at 10^11 or more: `plum kettle orbit sandal` 10^20.7.
 */
const SCORING = { 0: 1e3, 1: 1e6, 2: 1e9, 3: 1e10 };
/** zxcvbn's attack-time defaults (only the feedback's crack times read them). */
const ATTACK_TIME = {
  onlineThrottlingXPerHour: 100,
  onlineNoThrottlingXPerSecond: 10,
  offlineSlowHashingXPerSecond: 1e4,
  offlineFastHashingXPerSecond: 1e10,
};

/**
 * Characters estimated: a longer password is judged by its first 64 (only ever an underestimate). With at
 * most 4 l33t substitutions tried, the slowest input measured costs about 30 ms of CPU with the English
 * dictionaries (16 cost 85 ms, the library's defaults 0.5-0.8 s; docs/console.md "Passwords").
 */
const CHECKED_LENGTH = 64;
const L33T_MAX_SUBSTITUTIONS = 4;

// Built on first use, once per isolate: ranking the dictionaries is work a Worker's start should not pay.
let estimator: ZxcvbnFactory | undefined;

export type Strength = { score: number; warning: string | null; suggestions: string[] };

/** zxcvbn's estimate of a password, with the account's email (and its parts) as words a guesser would try. */
export function estimateStrength(password: string, email?: string): Strength {
  estimator ??= new ZxcvbnFactory({
    // The common passwords, diceware words and keyboard graphs, and English words, names and Wikipedia terms.
    dictionary: { ...commonDictionary, ...englishDictionary },
    graphs: adjacencyGraphs,
    translations,
    maxLength: CHECKED_LENGTH,
    l33tMaxSubstitutions: L33T_MAX_SUBSTITUTIONS,
    timeEstimationValues: { scoring: SCORING, attackTime: ATTACK_TIME },
  });
  const inputs = email ? [email, ...email.split(/[@.+_-]/).filter((part) => part.length >= 3)] : [];
  const result = estimator.check(password, inputs);
  return { score: result.score, warning: result.feedback.warning, suggestions: result.feedback.suggestions };
}
