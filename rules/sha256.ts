/**
 * SHA-256 (FIPS 180-4) of a string's UTF-8 bytes, as lowercase hex, in plain JavaScript: the
 * workflow sandbox has no `node:crypto`. Used where a workflow needs a stable, well-spread order
 * (the held-out checklist selection ranks ids by their digest), not for secrets.
 *
 * The string is encoded by hand, exactly as `TextEncoder` and `Buffer.from(s, 'utf8')` do: a lone
 * surrogate becomes U+FFFD (EF BF BD). Linear in the input; a 1 MB string takes a few milliseconds.
 *
 * Sandbox-safe: no imports.
 */

/** Round constants: the first 32 bits of the fractional parts of the cube roots of the first 64 primes. */
const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be,
  0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa,
  0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85,
  0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3,
  0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f,
  0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

/** Initial hash: the first 32 bits of the fractional parts of the square roots of the first 8 primes. */
const H0 = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

/** How many UTF-8 bytes `s` takes (lone surrogates count as U+FFFD, 3 bytes). */
function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** Writes the UTF-8 bytes of `s` into `out` from index 0; returns the count written. */
function encodeUtf8(s: string, out: Uint8Array): number {
  let p = 0;
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) {
      out[p++] = c;
      continue;
    }
    if (c < 0x800) {
      out[p++] = 0xc0 | (c >> 6);
      out[p++] = 0x80 | (c & 0x3f);
      continue;
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      const next = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && (next & 0xfc00) === 0xdc00) {
        const cp = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
        i++;
        out[p++] = 0xf0 | (cp >> 18);
        out[p++] = 0x80 | ((cp >> 12) & 0x3f);
        out[p++] = 0x80 | ((cp >> 6) & 0x3f);
        out[p++] = 0x80 | (cp & 0x3f);
        continue;
      }
      c = 0xfffd; // lone surrogate
    }
    out[p++] = 0xe0 | (c >> 12);
    out[p++] = 0x80 | ((c >> 6) & 0x3f);
    out[p++] = 0x80 | (c & 0x3f);
  }
  return p;
}

const rotr = (x: number, n: number): number => (x >>> n) | (x << (32 - n));

/** SHA-256 of the UTF-8 encoding of `text`, as 64 lowercase hex digits. */
export function sha256Hex(text: string): string {
  const len = utf8Length(text);
  // Message, a 0x80 byte, zero padding, and the bit length in the last 8 bytes of a 64-byte block.
  const blocks = Math.floor((len + 8) / 64) + 1;
  const bytes = new Uint8Array(blocks * 64);
  encodeUtf8(text, bytes);
  bytes[len] = 0x80;
  const bitLenHigh = Math.floor(len / 0x20000000); // len * 8 / 2^32
  const bitLenLow = (len * 8) >>> 0;
  const end = bytes.length;
  bytes[end - 8] = (bitLenHigh >>> 24) & 0xff;
  bytes[end - 7] = (bitLenHigh >>> 16) & 0xff;
  bytes[end - 6] = (bitLenHigh >>> 8) & 0xff;
  bytes[end - 5] = bitLenHigh & 0xff;
  bytes[end - 4] = (bitLenLow >>> 24) & 0xff;
  bytes[end - 3] = (bitLenLow >>> 16) & 0xff;
  bytes[end - 2] = (bitLenLow >>> 8) & 0xff;
  bytes[end - 1] = bitLenLow & 0xff;

  const h = Int32Array.from(H0);
  const w = new Int32Array(64);
  for (let b = 0; b < blocks; b++) {
    const base = b * 64;
    for (let t = 0; t < 16; t++) {
      const o = base + t * 4;
      w[t] = ((bytes[o] as number) << 24) | ((bytes[o + 1] as number) << 16) | ((bytes[o + 2] as number) << 8) | (bytes[o + 3] as number);
    }
    for (let t = 16; t < 64; t++) {
      const w15 = w[t - 15] as number;
      const w2 = w[t - 2] as number;
      const s0 = rotr(w15, 7) ^ rotr(w15, 18) ^ (w15 >>> 3);
      const s1 = rotr(w2, 17) ^ rotr(w2, 19) ^ (w2 >>> 10);
      w[t] = ((w[t - 16] as number) + s0 + (w[t - 7] as number) + s1) | 0;
    }
    let a = h[0] as number;
    let bb = h[1] as number;
    let c = h[2] as number;
    let d = h[3] as number;
    let e = h[4] as number;
    let f = h[5] as number;
    let g = h[6] as number;
    let hh = h[7] as number;
    for (let t = 0; t < 64; t++) {
      const S1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
      const ch = (e & f) ^ (~e & g);
      const t1 = (hh + S1 + ch + (K[t] as number) + (w[t] as number)) | 0;
      const S0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
      const maj = (a & bb) ^ (a & c) ^ (bb & c);
      const t2 = (S0 + maj) | 0;
      hh = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = bb;
      bb = a;
      a = (t1 + t2) | 0;
    }
    h[0] = ((h[0] as number) + a) | 0;
    h[1] = ((h[1] as number) + bb) | 0;
    h[2] = ((h[2] as number) + c) | 0;
    h[3] = ((h[3] as number) + d) | 0;
    h[4] = ((h[4] as number) + e) | 0;
    h[5] = ((h[5] as number) + f) | 0;
    h[6] = ((h[6] as number) + g) | 0;
    h[7] = ((h[7] as number) + hh) | 0;
  }
  let hex = '';
  for (const word of h) hex += (word >>> 0).toString(16).padStart(8, '0');
  return hex;
}
