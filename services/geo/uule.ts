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
