import type { BlobStore } from '../../services/ports/blobStore.js';

/** A blob store for an api under test that reads no raw HTML or result: empty reads, writes that store nothing. */
export const apiBlobStore: BlobStore = {
  put: async () => ({ key: '', sha256: '', bytes: 0 }),
  putGzipped: async () => ({ key: '', sha256: '', bytes: 0 }),
  openGzipped: () => {
    throw new Error('the api never writes raw HTML');
  },
  get: async () => undefined,
  getStored: async () => undefined,
  delete: async () => {},
  deleteUnder: async () => 0,
};
