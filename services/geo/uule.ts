/**
 * Google's `uule` location parameter (docs/decisions.md#searches-and-the-cache).
 *
 * `w+` form: base64 of a protobuf message {1: 2, 2: 32, 4: canonical name}. The name's length is a varint over its
 * UTF-8 bytes, so names over 127 bytes take two length bytes; the popular lookup-table shortcut (one base64 "key"
 * letter per length) only covers up to 63 and silently breaks beyond it.
 */
const varint = (n: number): number[] => {
  const out: number[] = [];
  let v = n;
  while (v > 0x7f) {
    out.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  out.push(v);
  return out;
};

export const uuleForName = (canonicalName: string): string => {
  const name = Buffer.from(canonicalName, 'utf8');
  // field 1 (varint) = 2, field 2 (varint) = 32, field 4 (length-delimited) = name
  const message = Buffer.concat([Buffer.from([0x08, 0x02, 0x10, 0x20, 0x22, ...varint(name.length)]), name]);
  return `w+${message.toString('base64')}`;
};

/**
 * `a+` form for a point: base64 of the text-format message a device-located Chrome sends. Coordinates are in
 * units of 1e-7 degrees; `radius` is in millimetres in this message, so metres are scaled by 1,000.
 * `timestampMicros` is when the position was taken; Google ignores positions it considers stale, so it defaults to now.
 */
export const uuleForPoint = (
  lat: number,
  lon: number,
  radiusMetres?: number,
  timestampMicros = Date.now() * 1000,
): string => {
  const lines = [
    'role:1',
    'producer:12',
    'provenance:6',
    `timestamp:${timestampMicros}`,
    'latlng{',
    `latitude_e7:${Math.round(lat * 1e7)}`,
    `longitude_e7:${Math.round(lon * 1e7)}`,
    '}',
  ];
  if (radiusMetres !== undefined) lines.push(`radius:${Math.round(radiusMetres * 1000)}`);
  return `a+${Buffer.from(`${lines.join('\n')}\n`, 'utf8').toString('base64')}`;
};

/** What a `uule` holds, as far as can be read back. */
export type DecodedUule =
  /** `w+`: a place by its canonical name, as `uuleForName` writes one */
  | { form: 'name'; name: string }
  /** `w+` that is a well-formed message but names no place (Google also takes feature ids: `w+CAQQCFIS…`) */
  | { form: 'encoded' }
  /** `a+`: a position (degrees; `radius` in metres when given) */
  | { form: 'point'; lat: number; lon: number; radius?: number };

/** Base64 of either alphabet (standard or URL-safe), padding optional: what clients send after the prefix. */
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

const base64Bytes = (text: string): Buffer | undefined => {
  if (!BASE64.test(text) || text.replace(/=+$/, '').length % 4 === 1) return undefined;
  const bytes = Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return bytes.length > 0 ? bytes : undefined;
};

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The fields of a protobuf message, or undefined when the bytes are not one (a wire type that does not exist, a
 * length past the end, a varint that never ends). Only field 4 (the name) is kept.
 */
const protobufName = (bytes: Buffer): { name?: string } | undefined => {
  let at = 0;
  const varint = (): number | undefined => {
    let value = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (at >= bytes.length) return undefined;
      const b = bytes[at++]!;
      value += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return value;
    }
    return undefined;
  };
  let name: string | undefined;
  while (at < bytes.length) {
    const key = varint();
    if (key === undefined || key >>> 3 === 0) return undefined;
    const wire = key & 7;
    if (wire === 0) {
      if (varint() === undefined) return undefined;
    } else if (wire === 1 || wire === 5) {
      at += wire === 1 ? 8 : 4;
      if (at > bytes.length) return undefined;
    } else if (wire === 2) {
      const length = varint();
      if (length === undefined || at + length > bytes.length) return undefined;
      if (key >>> 3 === 4) {
        try {
          name = UTF8.decode(bytes.subarray(at, at + length));
        } catch {
          return undefined;
        }
      }
      at += length;
    } else return undefined;
  }
  return name ? { name } : {};
};

/**
 * Reads a `uule` back: `w+` and the base64 of a protobuf message (its field 4 is the place's canonical name), or `a+`
 * and the base64 of a position in text form. Undefined when it is neither: Google cannot read it either. A space
 * stands for `+` (a `+` sent unencoded in a query string arrives as one).
 */
export const decodeUule = (uule: string): DecodedUule | undefined => {
  const text = uule.trim().replace(/ /g, '+');
  const bytes = base64Bytes(text.slice(2));
  if (!bytes) return undefined;
  if (text.startsWith('w+')) {
    const message = protobufName(bytes);
    if (!message) return undefined;
    return message.name ? { form: 'name', name: message.name } : { form: 'encoded' };
  }
  if (text.startsWith('a+')) {
    const body = bytes.toString('utf8');
    const lat = /latitude_e7:\s*(-?\d+)/.exec(body)?.[1];
    const lon = /longitude_e7:\s*(-?\d+)/.exec(body)?.[1];
    if (lat === undefined || lon === undefined) return undefined;
    const radius = /radius:\s*(-?\d+)/.exec(body)?.[1];
    return {
      form: 'point',
      lat: Number(lat) / 1e7,
      lon: Number(lon) / 1e7,
      ...(radius !== undefined ? { radius: Number(radius) / 1000 } : {}),
    };
  }
  return undefined;
};
