import { createHash } from 'node:crypto';
import type { RawHtmlRef } from '../../contracts/events.js';
import { ParsedSerp } from '../../contracts/result.js';
import { releaseBuffers } from '../buffers.js';
import { joinMembers, memberTexts, rememberJson, rememberMembers } from '../knownJson.js';
import type { BlobStore } from '../ports/blobStore.js';
import { gzipOffLoop } from '../zlib.js';

/**
 * Parsed results live in the blob store beside the raw HTML, referenced by `CrawlCompleted` / `SearchReparsed`
 * (`resultRef`): events are immutable and kept for audit, results must be deletable at retention
 * (docs/decisions.md#retention-deletes-results-keeps-events), and a replay reads small events. Events recorded before
 * carry the result inline (`result`); both forms read the same.
 */
export const resultBlobKey = (jobId: string, reparsedAt?: string) =>
  reparsedAt === undefined ? `results/${jobId}.json` : `results/${jobId}.r${Date.parse(reparsedAt)}.json`;

/**
 * Results this process has just written, for the first load of the same blob: in one process the projector loads
 * each result right after the crawl stored it, and reading it back (file, gunzip, SHA-256, JSON.parse of ~400 kB)
 * was the largest piece of the event loop's work per finished job. Taken once, checked against the reference's
 * digest, and bounded: another process, a replay or a later read goes to the blob store as before.
 */
const justWritten = new Map<string, { sha256: string; result: ParsedSerp }>();
const JUST_WRITTEN_MAX = 16;

/**
 * Results handed over from `justWritten`: this process's own, typed, never read back from storage, so the projector
 * does not validate them again (toProjected: ~1 ms a job, and zod's copy of the whole result).
 */
const handedOver = new WeakSet<object>();
export const isHandedOver = (result: unknown) =>
  result !== null && typeof result === 'object' && handedOver.has(result);

/** a result just stored under `ref`, kept for the projector's first load of it (justWritten) */
const keptForHandOver = (key: string, result: ParsedSerp, ref: RawHtmlRef) => {
  justWritten.delete(key);
  justWritten.set(key, { sha256: ref.sha256, result });
  if (justWritten.size > JUST_WRITTEN_MAX) justWritten.delete(justWritten.keys().next().value as string);
  return ref;
};

/**
 * A result made ready for the blob store (prepareResult): validated, serialised, gzipped and digested. `members` are
 * the texts of the result's members (knownJson.ts memberTexts): the answers and documents that embed the result or a
 * member are written from them.
 */
interface PreparedResult {
  members: [string, string][];
  gzip: Buffer;
  sha256: string;
  bytes: number;
}

/**
 * The result in the contract's shape and key order, as a replay reads it back (JSON.parse, then the schema): the text
 * kept for the read-model document is then the text a rebuild writes, byte for byte. With its text, gzip and digest,
 * as the blob stores' `put` makes them; the text is remembered for this result.
 */
const prepareResult = async (given: ParsedSerp): Promise<{ result: ParsedSerp; prepared: PreparedResult }> => {
  const result = ParsedSerp.parse(given);
  const members = memberTexts(result);
  const json = joinMembers(members);
  rememberJson(result, json);
  const body = Buffer.from(json, 'utf8');
  const sha256 = createHash('sha256').update(body).digest('hex');
  const gzip = await gzipOffLoop(body);
  const bytes = body.length;
  // gzipped: these bytes are read by nobody now, their memory goes back at once (as the blob stores' put does)
  releaseBuffers(body);
  return { result, prepared: { members, gzip, sha256, bytes } };
};

/** Stores a result prepared by prepareResult, and keeps it for the projector's first load. */
const putPreparedResult = async (blobStore: BlobStore, key: string, result: ParsedSerp, prepared: PreparedResult) => {
  rememberMembers(result, prepared.members);
  const ref = await blobStore.putGzipped(key, prepared.gzip, { sha256: prepared.sha256, bytes: prepared.bytes });
  return keptForHandOver(key, result, ref);
};

export const putResult = async (blobStore: BlobStore, key: string, given: ParsedSerp) => {
  const { result, prepared } = await prepareResult(given);
  return putPreparedResult(blobStore, key, result, prepared);
};

/** the result an event carries, inline or by reference; undefined once purged (or when the blob no longer matches) */
export const loadResult = async (
  blobStore: BlobStore | undefined,
  data: { result?: ParsedSerp; resultRef?: RawHtmlRef },
): Promise<unknown> => {
  if (data.result !== undefined) return data.result;
  if (!data.resultRef || !blobStore) return undefined;
  const handed = justWritten.get(data.resultRef.key);
  if (handed) {
    justWritten.delete(data.resultRef.key);
    if (handed.sha256 === data.resultRef.sha256) {
      handedOver.add(handed.result);
      return handed.result;
    }
  }
  const body = await blobStore.get(data.resultRef.key);
  if (!body) return undefined;
  if (createHash('sha256').update(body).digest('hex') !== data.resultRef.sha256) return undefined;
  return JSON.parse(body.toString('utf8')) as unknown;
};
