import { createHmac, timingSafeEqual } from 'node:crypto';

/** HMAC-signed links to raw HTML (`/raw/{job_id}?expires=…&signature=…`): no key needed, valid until `expires`. */
const sign = (secret: string, jobId: string, expires: number) =>
  createHmac('sha256', secret).update(`${jobId}.${expires}`).digest('base64url');

export const signRawLink = (secret: string, baseUrl: string, jobId: string, ttlS: number, now = Date.now()) => {
  const expires = Math.floor(now / 1000) + ttlS;
  return {
    url: `${baseUrl}/raw/${jobId}?expires=${expires}&signature=${sign(secret, jobId, expires)}`,
    expiresAt: new Date(expires * 1000).toISOString(),
  };
};

export const verifyRawLink = (secret: string, jobId: string, expires: number, signature: string, now = Date.now()) => {
  if (!Number.isFinite(expires) || expires * 1000 < now) return 'expired' as const;
  const want = Buffer.from(sign(secret, jobId, expires));
  const got = Buffer.from(signature);
  return want.length === got.length && timingSafeEqual(want, got) ? ('ok' as const) : ('invalid' as const);
};
