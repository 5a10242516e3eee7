import type { DocReader } from '../../projections/projection.js';

export interface DocWrite {
  view: string;
  id: string;
  /** null deletes the document */
  doc: unknown | null;
  lookup?: string;
}

/**
 * Read models as JSON documents, with the projectors' checkpoints in the same store so that a batch of documents and
 * the checkpoint after it commit in one transaction: a crash never leaves them apart. Reads go through the typed
 * queries beside each projection (`projections/<view>/queries.ts`); only the projector writes.
 */
export interface ReadModelStore extends DocReader {
  /** writes the documents and moves `checkpointName` to `position`, atomically */
  commit(writes: DocWrite[], checkpointName: string, position: number): void;
  /**
   * Runs `fn` holding the store's write lock from its first statement, so reads inside it (the checkpoint, the
   * documents) cannot be overtaken by another process's projector before the writes land.
   */
  exclusive<T>(fn: () => T): T;
  checkpoint(name: string): number;
  /** every document of every view, in a stable order: what a rebuild must reproduce */
  dump(): Array<{ view: string; id: string; doc: string }>;
  /** drops every document and the named checkpoints (a rebuild starts from here) */
  reset(checkpointNames: string[]): void;
  /** gives the space of deleted documents back to the file system (after a retention sweep) */
  compact(): void;
  close(): void;
}
