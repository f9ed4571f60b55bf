import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { type FileSink, openFileSink } from '../shared/file_sink.ts';
import {
  requireSnapshotCode,
  SNAPSHOT_FILE_MODE,
  SNAPSHOT_FOLDER_MODE,
  type SnapshotWriter,
  type SnapshotWriterOptions,
} from './snapshot_writer.ts';
import type { StaticAnswer } from './static_answer.ts';
import { renderStaticPage } from './static_pages.ts';

/** Pairs per file: Cloudflare's bulk write takes at most 10,000 per request (and 100 MB). */
export const KV_PAIRS_PER_FILE = 10_000;
/** The key of the snapshot's own description (codes never start with `_`). */
export const KV_META_KEY = '_lifeline_snapshot';

/**
 * Key-value JSON for edge stores: `json/kv-0001.json`, … each an array of `{"key": code, "value": answer}` (the
 * answer a JSON string: `{"status", "cacheControl", "location"?, "page"?, "html"?}`), the format Cloudflare's
 * `wrangler kv bulk put` and bulk API take, 10,000 pairs a file. An edge function looks the path's code up and
 * answers with it; a missing key is the 404 in the meta entry.
 */
export async function createKvWriter(options: SnapshotWriterOptions): Promise<SnapshotWriter> {
  const dir = join(options.outDir, 'json');
  await mkdir(dir, { recursive: true, mode: SNAPSHOT_FOLDER_MODE });
  const files: string[] = [];
  let out: FileSink | undefined;
  let inFile = 0;
  let count = 0;
  const open = async () => {
    const name = `kv-${String(files.length + 1).padStart(4, '0')}.json`;
    files.push(`json/${name}`);
    out = await openFileSink(join(dir, name), { exclusive: true, mode: SNAPSHOT_FILE_MODE });
    inFile = 0;
    await out.write('[\n');
  };
  const pair = async (key: string, value: object) => {
    if (!out || inFile >= KV_PAIRS_PER_FILE) {
      if (out) await out.write('\n]\n').then(() => out!.close());
      await open();
    }
    await out!.write(`${inFile > 0 ? ',\n' : ''}${JSON.stringify({ key, value: JSON.stringify(value) })}`);
    inFile++;
  };
  await pair(KV_META_KEY, {
    shortBaseUrl: options.shortBaseUrl,
    generatedAt: options.generatedAt,
    notFound: { ...options.notFound, html: renderStaticPage('not_found') },
  });
  return {
    async add(answer: StaticAnswer) {
      await pair(requireSnapshotCode(answer.code), {
        status: answer.status,
        cacheControl: answer.cacheControl,
        ...(answer.location !== undefined ? { location: answer.location } : {}),
        ...(answer.routed ? { routed: 'default target: routing rules are not applied here' } : {}),
        ...(answer.page !== undefined
          ? { page: answer.page, html: renderStaticPage(answer.page, answer.destination) }
          : {}),
      });
      count++;
    },
    async finish() {
      if (out) {
        await out.write('\n]\n');
        await out.close();
      }
      return { files, entries: count, skipped: [] };
    },
    abort() {
      out?.abort();
    },
  };
}
