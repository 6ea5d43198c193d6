/**
 * Cross-correlation for the audio tests: the lag (samples, within ±max) at which `part` best matches `whole`
 * from sample `at`, and its normalised correlation. Computed from decoded samples only, never from the
 * engine's arithmetic.
 */
export function lagOf(
  whole: Int16Array,
  at: number,
  part: Int16Array,
  max: number,
): { lag: number; r: number } {
  let best = { lag: 0, r: Number.NEGATIVE_INFINITY };
  let partEnergy = 0;
  for (const v of part) partEnergy += v * v;
  for (let lag = -max; lag <= max; lag++) {
    let dot = 0;
    let energy = 0;
    for (let i = 0; i < part.length; i++) {
      const w = whole[at + lag + i] ?? 0;
      dot += w * part[i]!;
      energy += w * w;
    }
    const r = energy === 0 ? 0 : dot / Math.sqrt(energy * partEnergy);
    if (r > best.r) best = { lag, r };
  }
  return best;
}
