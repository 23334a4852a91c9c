/**
 * Node's native HMAC-SHA256 as an HmacEngine. Node-only (node:crypto), so it is exported
 * from `saga-streams/node`, and Node entry points pass it to the factories (`hmac` option).
 * Produces exactly the Web Crypto bytes (the signature vectors run on both engines).
 *
 * Messages up to ONE_SHOT_LIMIT are MACed from HMAC's definition (RFC 2104) with two
 * one-shot `crypto.hash` calls over buffers kept per key, digests returned as strings:
 * about 0.9 µs per 370-byte message against 3.2 µs for `createHmac`, which builds a stream
 * object with a native handle and a Buffer result per message — at 500 verifications a
 * round that was the largest cost the product adds to a read. Larger messages, and Node
 * releases without `crypto.hash` (< 20.12), use `createHmac`.
 *
 * Kept because it pays end to end (issue 15 item 4, bench/hmac-engines.ts, 6 paired reps of
 * the product draining 10k × 300 B on a loaded 2-core machine): against `plainNodeHmac` with
 * a fresh canonical message per entry, this engine alone used 10 % / 7 % less Node CPU per
 * entry at batch 100 / 500 (entries/s 1.14 / 1.05), and with the verifier's reused
 * canonical buffer 23 % / 13 % less (entries/s 1.48 / 1.38). test/unit/
 * node-hmac-differential.test.ts holds it to `createHmac` on random keys and messages.
 */
import * as nodeCrypto from 'node:crypto';
import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { constantTimeEqual, constantTimeEqualAscii, constantTimeEqualHex } from '../auth/constant-time';
import { fromHex, toHex } from '../auth/hex';
import type { HmacEngine } from '../auth/hmac';
import type { SecretKey } from '../auth/secret';

const BLOCK_BYTES = 64;
const DIGEST_BYTES = 32;
const ONE_SHOT_LIMIT = 256 * 1024;

type OneShotHash = (algorithm: string, data: Uint8Array, encoding: 'latin1' | 'hex') => string;
const oneShotHash = (nodeCrypto as { hash?: OneShotHash }).hash;

/** Per-key state, derived once and kept inside the SecretKey (never printed). */
interface KeyState {
  readonly keyObject: KeyObject;
  /** key ⊕ ipad, then room for the message: the whole inner hash input. */
  inner: Buffer;
  /** The last `inner` prefix hashed: messages of one size (the common case) reuse it. */
  innerView: Buffer;
  /** key ⊕ opad, then the inner digest: the whole outer hash input. */
  readonly outer: Buffer;
}

const KEY_STATE = {};

function deriveKeyState(bytes: Uint8Array): KeyState {
  // A key longer than the block is replaced by its digest (RFC 2104 §3); shorter ones are zero-padded.
  const block = Buffer.alloc(BLOCK_BYTES);
  if (bytes.length > BLOCK_BYTES) {
    const digest = nodeCrypto.createHash('sha256').update(bytes).digest();
    block.set(digest);
    digest.fill(0);
  } else {
    block.set(bytes);
  }
  const inner = Buffer.alloc(BLOCK_BYTES + 1024);
  const outer = Buffer.alloc(BLOCK_BYTES + DIGEST_BYTES);
  for (let i = 0; i < BLOCK_BYTES; i += 1) {
    inner[i] = block[i]! ^ 0x36;
    outer[i] = block[i]! ^ 0x5c;
  }
  block.fill(0);
  return { keyObject: createSecretKey(bytes), inner, innerView: inner.subarray(0, 0), outer };
}

function stateOf(key: SecretKey): KeyState {
  return key.derive(KEY_STATE, deriveKeyState);
}

/**
 * H((K ⊕ opad) ‖ H((K ⊕ ipad) ‖ m)) as lowercase hex, hashing buffers reused from call to
 * call. Both digests travel as strings: a Buffer result costs more than the hash itself
 * (about 1.2 µs each, measured), a latin1 or hex string a fraction of that.
 */
function oneShotMacHex(hash: OneShotHash, state: KeyState, message: Uint8Array): string {
  const needed = BLOCK_BYTES + message.length;
  if (state.inner.length < needed) {
    const grown = Buffer.alloc(Math.max(needed, 2 * state.inner.length));
    state.inner.copy(grown, 0, 0, BLOCK_BYTES);
    state.inner.fill(0, 0, BLOCK_BYTES); // key material does not outlive its buffer
    state.inner = grown;
    state.innerView = grown.subarray(0, 0);
  }
  state.inner.set(message, BLOCK_BYTES);
  if (state.innerView.length !== needed) state.innerView = state.inner.subarray(0, needed);
  state.outer.write(hash('sha256', state.innerView, 'latin1'), BLOCK_BYTES, 'latin1');
  return hash('sha256', state.outer, 'hex');
}

function fitsOneShot(message: Uint8Array): boolean {
  return oneShotHash !== undefined && message.length <= ONE_SHOT_LIMIT;
}

function streamingMac(state: KeyState, message: Uint8Array): Uint8Array {
  return createHmac('sha256', state.keyObject).update(message).digest();
}

export const nodeHmac: HmacEngine = {
  name: 'node',
  synchronous: true,
  mac(key, message) {
    const state = stateOf(key);
    return fitsOneShot(message) ? fromHex(oneShotMacHex(oneShotHash!, state, message))! : streamingMac(state, message);
  },
  verify(key, message, expected) {
    const state = stateOf(key);
    // Compared in JS, not with timingSafeEqual: `expected` is a small typed array V8 keeps
    // on its heap, and handing it to native code makes V8 move it off-heap first (~2 µs).
    if (fitsOneShot(message)) return constantTimeEqualHex(oneShotMacHex(oneShotHash!, state, message), expected);
    return constantTimeEqual(streamingMac(state, message), expected);
  },
  // The digest is a hex string already: comparing it with the stored hex costs no decoding
  // and no allocation (bench/entry-work.ts; see verifyStoredSignature).
  verifyHex(key, message, expectedHex) {
    const state = stateOf(key);
    const hex = fitsOneShot(message) ? oneShotMacHex(oneShotHash!, state, message) : toHex(streamingMac(state, message));
    return constantTimeEqualAscii(hex, expectedHex);
  },
};

/** The textbook engine, `createHmac` and `timingSafeEqual` per message: the baseline the fast path is measured against. */
export const plainNodeHmac: HmacEngine = {
  name: 'node-plain',
  synchronous: true,
  mac(key, message) {
    return streamingMac(stateOf(key), message);
  },
  verify(key, message, expected) {
    const mac = streamingMac(stateOf(key), message);
    return mac.length === expected.length && timingSafeEqual(mac, expected);
  },
};
