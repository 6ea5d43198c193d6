import { type TranslationKeys, ZxcvbnFactory } from "@zxcvbn-ts/core";
import { adjacencyGraphs, dictionary } from "@zxcvbn-ts/language-common";

/**
 * zxcvbn's score, 0–4: 3 is "safely unguessable" (≥ 10^8 guesses), the least a new password must reach.
 * `qwertyuiopas` scores 1, `correcthorse` 2, `abcabcabcabc` 0, `aaaaaaaaaaab` 1.
 */
export const MIN_SCORE = 3;

/**
 * Characters estimated: a longer password is judged by its first 64 (only ever an underestimate). With at
 * most 16 l33t substitutions tried, the slowest input measured costs tens of milliseconds instead of the
 * 0.5-0.8 s a 256-character string of digits and symbols costs with the library's defaults (docs/console.md).
 */
const CHECKED_LENGTH = 64;
const L33T_MAX_SUBSTITUTIONS = 16;

/** zxcvbn's feedback keys in plain English (the library ships keys only; language-en would add 1.5 MB of words). */
const translations: TranslationKeys = {
  warnings: {
    straightRow: "Straight rows of keys on your keyboard are easy to guess.",
    keyPattern: "Short keyboard patterns are easy to guess.",
    simpleRepeat: 'Repeated characters like "aaa" are easy to guess.',
    extendedRepeat: 'Repeated character patterns like "abcabcabc" are easy to guess.',
    sequences: 'Common character sequences like "abc" are easy to guess.',
    recentYears: "Recent years are easy to guess.",
    dates: "Dates are easy to guess.",
    topTen: "This is a heavily used password.",
    topHundred: "This is a frequently used password.",
    common: "This is a commonly used password.",
    similarToCommon: "This is similar to a commonly used password.",
    wordByItself: "Single words are easy to guess.",
    namesByThemselves: "Single names or surnames are easy to guess.",
    commonNames: "Common names and surnames are easy to guess.",
    userInputs: "There should not be any personal or page-related data.",
    pwned: "Your password was exposed by a data breach on the Internet.",
  },
  suggestions: {
    l33t: "Avoid predictable letter substitutions like '@' for 'a'.",
    reverseWords: "Avoid reversed spellings of common words.",
    allUppercase: "Capitalize some, but not all letters.",
    capitalization: "Capitalize more than the first letter.",
    dates: "Avoid dates and years that are associated with you.",
    recentYears: "Avoid recent years.",
    associatedYears: "Avoid years that are associated with you.",
    sequences: "Avoid common character sequences.",
    repeated: "Avoid repeated words and characters.",
    longerKeyboardPattern: "Use longer keyboard patterns and change typing direction multiple times.",
    anotherWord: "Add more words that are less common.",
    useWords: "Use multiple words, but avoid common phrases.",
    noNeed: "You can create strong passwords without using symbols, numbers, or uppercase letters.",
    pwned: "If you use this password elsewhere, you should change it.",
  },
  timeEstimation: {
    ltSecond: "less than a second",
    second: "{base} second",
    seconds: "{base} seconds",
    minute: "{base} minute",
    minutes: "{base} minutes",
    hour: "{base} hour",
    hours: "{base} hours",
    day: "{base} day",
    days: "{base} days",
    month: "{base} month",
    months: "{base} months",
    year: "{base} year",
    years: "{base} years",
    centuries: "centuries",
  },
};

// Built on first use, once per isolate: ranking the dictionaries is work a Worker's start should not pay.
let estimator: ZxcvbnFactory | undefined;

export type Strength = { score: number; warning: string | null; suggestions: string[] };

/** zxcvbn's estimate of a password, with the account's email (and its parts) as words a guesser would try. */
export function estimateStrength(password: string, email?: string): Strength {
  estimator ??= new ZxcvbnFactory({
    dictionary,
    graphs: adjacencyGraphs,
    translations,
    maxLength: CHECKED_LENGTH,
    l33tMaxSubstitutions: L33T_MAX_SUBSTITUTIONS,
  });
  const inputs = email ? [email, ...email.split(/[@.+_-]/).filter((part) => part.length >= 3)] : [];
  const result = estimator.check(password, inputs);
  return { score: result.score, warning: result.feedback.warning, suggestions: result.feedback.suggestions };
}
