import type { DocReader } from '../projection.js';
import { type ApiKeyDoc, apiKeysProjection } from './apiKeys.js';

export const apiKeysQueries = (docs: DocReader) => ({
  byId: (keyId: string) => docs.get<ApiKeyDoc>(apiKeysProjection.name, keyId),
  /** the key whose HMAC is `keyHash`: how a request's key is found without ever storing it */
  byHash: (keyHash: string) => docs.findByLookup<ApiKeyDoc>(apiKeysProjection.name, keyHash),
  all: () => docs.list<ApiKeyDoc>(apiKeysProjection.name),
});
