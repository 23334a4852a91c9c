/**
 * Who is asking, for the login throttle (login-throttle.ts): the client's address as the
 * platform saw it — the socket's peer on Node (@hono/node-server), the event's source IP on
 * Lambda (Function URL, API Gateway), `CF-Connecting-IP` on Workers (Cloudflare sets it; a
 * request there has `cf`). Never a header a client chooses elsewhere (`X-Forwarded-For` is
 * anyone's to write). Read by duck typing, so the dashboard stays free of platform adapters.
 */
import type { Context } from 'hono';

/** Clients whose address the platform does not give share this key (and so one bucket). */
export const UNKNOWN_CLIENT = 'unknown';
/** A key is at most this long: the throttle's table holds text it did not choose. */
const MAX_KEY_LENGTH = 64;

interface PlatformBindings {
  readonly incoming?: { readonly socket?: { readonly remoteAddress?: unknown } };
  readonly server?: { readonly incoming?: { readonly socket?: { readonly remoteAddress?: unknown } } };
  readonly requestContext?: { readonly identity?: { readonly sourceIp?: unknown }; readonly http?: { readonly sourceIp?: unknown } };
}

function addressOf(c: Context): unknown {
  const env = (c.env ?? {}) as PlatformBindings;
  const node = env.incoming ?? env.server?.incoming;
  if (node) return node.socket?.remoteAddress;
  if (env.requestContext) return env.requestContext.identity?.sourceIp ?? env.requestContext.http?.sourceIp;
  if ((c.req.raw as { cf?: unknown }).cf !== undefined) return c.req.header('cf-connecting-ip');
  return undefined;
}

/** The throttle key of the request's client (see clientKey). */
export function clientKeyOf(c: Context): string {
  const address = addressOf(c);
  return typeof address === 'string' && address !== '' ? clientKey(address) : UNKNOWN_CLIENT;
}

/**
 * An IPv4 address as is; an IPv6 one by its /64 (one site gets a /64 or more, so one client
 * could otherwise walk 2^64 addresses past its limit); IPv4-mapped IPv6 as the IPv4 address.
 */
export function clientKey(address: string): string {
  const plain = address.replace(/%.*$/s, '').toLowerCase();
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(plain);
  if (mapped) return mapped[1]!;
  if (!plain.includes(':')) return plain.slice(0, MAX_KEY_LENGTH);
  return `${ipv6Groups(plain).slice(0, 4).join(':')}::/64`.slice(0, MAX_KEY_LENGTH);
}

/** The eight groups of an IPv6 address, `::` expanded, leading zeros dropped. */
function ipv6Groups(address: string): string[] {
  const [head = '', tail] = address.split('::', 2);
  const split = (part: string) => (part === '' ? [] : part.split(':'));
  const left = split(head);
  const right = tail === undefined ? [] : split(tail);
  const zeros = Array.from({ length: Math.max(0, 8 - left.length - right.length) }, () => '0');
  return [...left, ...zeros, ...right].map((group) => group.replace(/^0+(?=.)/, ''));
}
