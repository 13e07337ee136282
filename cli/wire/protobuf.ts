/**
 * The protobuf wire format, as little of it as the CLI's light Temporal client needs: a writer of
 * varints, strings, bytes and nested messages, and a reader that walks a message's fields. No
 * schema: the message shapes (field numbers from Temporal's .proto files) live in
 * `cli/wire/temporal.ts`. No dependencies.
 */

/** Wire types: 0 varint, 1 fixed 64-bit, 2 length-delimited, 5 fixed 32-bit. */
const VARINT = 0;
const FIXED64 = 1;
const LEN = 2;
const FIXED32 = 5;

export class ProtoWriter {
  private readonly parts: Buffer[] = [];

  private varint(n: number | bigint): void {
    let v = BigInt.asUintN(64, BigInt(n));
    const bytes: number[] = [];
    while (v >= 0x80n) {
      bytes.push(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    bytes.push(Number(v));
    this.parts.push(Buffer.from(bytes));
  }

  private tag(field: number, wireType: number): void {
    this.varint((field << 3) | wireType);
  }

  /** An integer field (int32, int64, enum, bool); zero is the default and is not written. */
  int(field: number, value: number | bigint | boolean | undefined): this {
    const n = typeof value === 'boolean' ? (value ? 1 : 0) : value;
    if (n === undefined || n === 0 || n === 0n) return this;
    this.tag(field, VARINT);
    this.varint(n);
    return this;
  }

  /** Bytes; empty is the default and is not written. */
  bytes(field: number, value: Uint8Array | undefined): this {
    if (!value || value.length === 0) return this;
    this.tag(field, LEN);
    this.varint(value.length);
    this.parts.push(Buffer.from(value.buffer, value.byteOffset, value.length));
    return this;
  }

  /** A string; empty is the default and is not written. */
  string(field: number, value: string | undefined): this {
    return value ? this.bytes(field, Buffer.from(value, 'utf8')) : this;
  }

  /** A nested message, written even when empty (presence matters for messages). */
  message(field: number, build: (w: ProtoWriter) => void): this {
    const inner = new ProtoWriter();
    build(inner);
    const body = inner.finish();
    this.tag(field, LEN);
    this.varint(body.length);
    this.parts.push(body);
    return this;
  }

  /** A map<string, V> field: each entry a message of key (1) and value (2). */
  map<V>(field: number, entries: Record<string, V>, value: (w: ProtoWriter, v: V) => void): this {
    for (const [k, v] of Object.entries(entries)) {
      this.message(field, (e) => {
        e.string(1, k);
        e.message(2, (vw) => value(vw, v));
      });
    }
    return this;
  }

  /** A map<string, bytes> field. */
  bytesMap(field: number, entries: Record<string, Uint8Array>): this {
    for (const [k, v] of Object.entries(entries)) this.message(field, (e) => e.string(1, k).bytes(2, v));
    return this;
  }

  finish(): Buffer {
    return Buffer.concat(this.parts);
  }
}

/** One field as read: its number, and its value as an integer (varint, fixed) or bytes (length-delimited). */
export interface ProtoField {
  field: number;
  wireType: number;
  /** Varint and fixed values as bigint (int64 values exceed 2^53). */
  int: bigint;
  /** Length-delimited values (strings, bytes, messages, packed repeats). */
  bytes: Buffer;
}

export class ProtoError extends Error {
  override name = 'ProtoError';
}

function readVarint(buf: Buffer, pos: number): [bigint, number] {
  // Most varints (tags, lengths, small numbers) fit in 28 bits: read those without BigInt.
  let small = 0;
  for (let i = 0; i < 4 && pos + i < buf.length; i++) {
    const b = buf[pos + i] as number;
    small |= (b & 0x7f) << (7 * i);
    if ((b & 0x80) === 0) return [BigInt(small), pos + i + 1];
  }
  let result = 0n;
  let shift = 0n;
  for (;;) {
    if (pos >= buf.length) throw new ProtoError('truncated varint');
    const b = buf[pos++] as number;
    result |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) return [result, pos];
    shift += 7n;
    if (shift > 63n) throw new ProtoError('varint too long');
  }
}

const EMPTY: Buffer = Buffer.alloc(0);

/** The fields of one message, in wire order (unknown fields included; the caller picks what it knows). */
export function* fields(buf: Buffer): Generator<ProtoField> {
  let pos = 0;
  while (pos < buf.length) {
    const [key, afterKey] = readVarint(buf, pos);
    pos = afterKey;
    const field = Number(key >> 3n);
    const wireType = Number(key & 7n);
    switch (wireType) {
      case VARINT: {
        const [v, next] = readVarint(buf, pos);
        pos = next;
        yield { field, wireType, int: v, bytes: EMPTY };
        break;
      }
      case FIXED64: {
        if (pos + 8 > buf.length) throw new ProtoError('truncated fixed64');
        yield { field, wireType, int: buf.readBigUInt64LE(pos), bytes: buf.subarray(pos, pos + 8) };
        pos += 8;
        break;
      }
      case LEN: {
        const [len, next] = readVarint(buf, pos);
        const end = next + Number(len);
        if (end > buf.length) throw new ProtoError('truncated length-delimited field');
        yield { field, wireType, int: 0n, bytes: buf.subarray(next, end) };
        pos = end;
        break;
      }
      case FIXED32: {
        if (pos + 4 > buf.length) throw new ProtoError('truncated fixed32');
        yield { field, wireType, int: BigInt(buf.readUInt32LE(pos)), bytes: buf.subarray(pos, pos + 4) };
        pos += 4;
        break;
      }
      default:
        throw new ProtoError(`unsupported wire type ${wireType} (field ${field})`);
    }
  }
}

/** An int32/enum value: the low 32 bits, signed. */
export const int32 = (f: ProtoField): number => Number(BigInt.asIntN(32, f.int));
/** An int64 value as a number (exact below 2^53). */
export const int64 = (f: ProtoField): number => Number(BigInt.asIntN(64, f.int));
export const str = (f: ProtoField): string => f.bytes.toString('utf8');

/** A map<string, V> entry: its key (1) and value (2) bytes. */
export function mapEntry(f: ProtoField): [string, Buffer] {
  let key = '';
  let value: Buffer = EMPTY;
  for (const e of fields(f.bytes)) {
    if (e.field === 1) key = str(e);
    else if (e.field === 2) value = e.bytes;
  }
  return [key, value];
}
