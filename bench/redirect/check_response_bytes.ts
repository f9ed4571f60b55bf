// Before any round: every server's raw answer for one code, compared with ours (Date ignored). A node:http
// baseline that writes other bytes would make the ratio measure a shorter answer, so that stops the run; nginx
// cannot write node's bytes (see its differences in the report), and our own variants are reported.

import type { BenchServer } from './bench_server.ts';
import { CODE_PREFIX, say } from './bench_settings.ts';
import { captureRawExchange, describeDifference, withoutDate } from './raw_response.ts';

export interface BytesVerdict {
  server: string;
  /** Empty when the bytes (and keep-alive behaviour) are ours. */
  differences: string[];
}

/** Compares every server's answer for `/<prefix>1` with `reference`'s (ours). */
export async function checkResponseBytes(
  reference: BenchServer,
  servers: BenchServer[],
  options: { oursVaries?: boolean } = {},
): Promise<BytesVerdict[]> {
  const path = `/${CODE_PREFIX}1`;
  const ours = await captureRawExchange(reference.port, path);
  say(
    `${reference.name} answers ${path} with ${JSON.stringify(withoutDate(ours.responses[0]!))} (Date removed), ` +
      `connection ${ours.keptAlive ? 'kept alive' : 'closed'}`,
  );
  const verdicts: BytesVerdict[] = [];
  for (const s of servers) {
    if (s === reference) continue;
    const differences = describeDifference(ours, await captureRawExchange(s.port, path));
    verdicts.push({ server: s.name, differences });
    say(`bytes of ${s.name}: ${differences.length === 0 ? 'identical to ours' : differences.join('; ')}`);
    // Links with routing rules answer with Vary and a private Cache-Control, which no bare server writes: reported.
    if (differences.length > 0 && s.name.startsWith('bare-') && !options.oursVaries)
      throw new Error(
        `${s.name} does not write the same bytes as ${reference.name}: ${differences.join('; ')}`,
      );
  }
  return verdicts;
}
