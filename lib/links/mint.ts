import { isPossibleCode } from '../codes/code_rules.ts';
import { CODE_ALPHABET } from '../shared/config.ts';

/** How many fresh codes one creation tries before giving up (a UNIQUE violation each time). */
export const MINT_MAX_ATTEMPTS = 8;

/**
 * Draws a code from the CSPRNG: `length` characters of the 64-letter alphabet (no modulo bias, since 64
 * divides 256). Never reserved, never `_`-prefixed; redraws in that rare case. ADR 0013 says why codes are
 * random draws checked by a UNIQUE key rather than counters or pre-allocated ranges.
 */
export function randomCode(length: number): string {
  for (;;) {
    const bytes = crypto.getRandomValues(new Uint8Array(length));
    let code = '';
    for (const b of bytes) code += CODE_ALPHABET[b & 63];
    if (isPossibleCode(code)) return code;
  }
}

/** What `claim` says about one candidate: stored under the code, the code is taken, or refused for good. */
export type ClaimOutcome<R, E extends Error = Error> = { claimed: R } | { taken: true } | { refused: E };

/** The end of minting for one claimant. */
export type MintOutcome<R, E extends Error = Error> = { claimed: R; code: string } | { refused: E };

/**
 * THE minting loop, used by every way a code is made (single and batch creation, WordPress posts, re-mints
 * after a vendor refused a code): each claimant gets its alias or a fresh draw; `claim` tries to store all
 * candidates of a round at once (the UNIQUE key decides) and says, per candidate, claimed / taken / refused.
 * A taken alias is refused (`aliasTaken`); a taken draw is drawn again, at most MINT_MAX_ATTEMPTS rounds.
 */
export async function mintCodes<T, R, E extends Error = Error>(
  claimants: readonly T[],
  options: {
    codeLength: number;
    aliasOf?: (claimant: T) => string | undefined;
    claim: (round: { claimant: T; code: string }[]) => Promise<ClaimOutcome<R, E>[]>;
    aliasTaken: (alias: string) => E;
    exhausted: () => E;
  },
): Promise<MintOutcome<R, E>[]> {
  const outcomes: (MintOutcome<R, E> | undefined)[] = claimants.map(() => undefined);
  let round = claimants.map((claimant, index) => ({ claimant, index }));
  for (let attempt = 0; round.length > 0; attempt++) {
    const candidates = round.map(({ claimant, index }) => ({
      claimant,
      index,
      code: options.aliasOf?.(claimant) ?? randomCode(options.codeLength),
    }));
    const answers = await options.claim(candidates);
    round = [];
    for (const [i, candidate] of candidates.entries()) {
      const answer = answers[i]!;
      const alias = options.aliasOf?.(candidate.claimant);
      if ('claimed' in answer) outcomes[candidate.index] = { claimed: answer.claimed, code: candidate.code };
      else if ('refused' in answer) outcomes[candidate.index] = { refused: answer.refused };
      else if (alias !== undefined) outcomes[candidate.index] = { refused: options.aliasTaken(alias) };
      else if (attempt + 1 >= MINT_MAX_ATTEMPTS) outcomes[candidate.index] = { refused: options.exhausted() };
      else round.push({ claimant: candidate.claimant, index: candidate.index });
    }
  }
  return outcomes as MintOutcome<R, E>[];
}

/** mintCodes for one claimant: the claimed value, or the refusal thrown. */
export async function mintOneCode<R>(options: {
  codeLength: number;
  alias?: string | undefined;
  claim: (code: string) => Promise<ClaimOutcome<R>>;
  aliasTaken: (alias: string) => Error;
  exhausted: () => Error;
}): Promise<{ claimed: R; code: string }> {
  const [outcome] = await mintCodes([null], {
    codeLength: options.codeLength,
    aliasOf: () => options.alias,
    claim: async ([candidate]) => [await options.claim(candidate!.code)],
    aliasTaken: options.aliasTaken,
    exhausted: options.exhausted,
  });
  if ('refused' in outcome!) throw outcome.refused;
  return outcome!;
}
