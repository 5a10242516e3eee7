import { createHash } from 'node:crypto';
import type { RawHtmlRef } from '../../contracts/events.js';
import type { ParsedSerp } from '../../contracts/result.js';
import type { BlobStore } from '../ports/blobStore.js';

/**
 * Parsed results live in the blob store beside the raw HTML, referenced by `CrawlCompleted` / `SearchReparsed`
 * (`resultRef`): events are immutable and kept for audit, results must be deletable at retention (issue 13), and a
 * replay reads small events. Events recorded before carry the result inline (`result`); both forms read the same.
 */
export const resultBlobKey = (jobId: string, reparsedAt?: string) =>
  reparsedAt === undefined ? `results/${jobId}.json` : `results/${jobId}.r${Date.parse(reparsedAt)}.json`;

export const putResult = (blobStore: BlobStore, key: string, result: ParsedSerp) =>
  blobStore.put(key, JSON.stringify(result));

/** the result an event carries, inline or by reference; undefined once purged (or when the blob no longer matches) */
export const loadResult = async (
  blobStore: BlobStore | undefined,
  data: { result?: ParsedSerp; resultRef?: RawHtmlRef },
): Promise<unknown> => {
  if (data.result !== undefined) return data.result;
  if (!data.resultRef || !blobStore) return undefined;
  const body = await blobStore.get(data.resultRef.key);
  if (!body) return undefined;
  if (createHash('sha256').update(body).digest('hex') !== data.resultRef.sha256) return undefined;
  return JSON.parse(body.toString('utf8')) as unknown;
};
