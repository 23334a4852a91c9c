/**
 * Throttling of admin-token guesses (login form and `Authorization: Bearer`): a token bucket
 * per client (client-address.ts) and one for all clients together, so neither one address
 * nor many can try tokens quickly. Every attempt takes a token from both before the token is
 * checked — concurrent guesses cannot all pass a check that counts only finished failures —
 * and an attempt that presented the right token gives them back, so an operator's good
 * logins and a bearer script never use up the budget (only while a check is under way — an
 * HMAC, well under a millisecond — does it hold one: at most `burst` checks per client run
 * at once). A refused attempt is not checked at all, so a 429 says nothing about the token.
 *
 * The state is this instance's memory: a Lambda container or Worker isolate throttles on its
 * own (N warm instances admit N times the rate). The per-client table is bounded: a client
 * whose bucket has refilled is forgotten, and past `maxClients` the least recently seen go
 * first (forgetting one only lets it start from a full bucket, which the global bucket bounds).
 */

export interface BucketLimits {
  /** Attempts allowed at once from a full bucket. */
  readonly burst: number;
  /** One attempt comes back every `refillMs`. */
  readonly refillMs: number;
}

export interface ThrottleLimits {
  readonly perClient: BucketLimits;
  readonly global: BucketLimits;
  /** Most clients remembered at once. */
  readonly maxClients: number;
}

/**
 * Per client: 10 attempts at once, then one every 6 s — an operator who mistypes the token a
 * few times never waits, one who mistyped it ten times waits at most 6 s, and a full
 * bucket again after a minute. All clients: 100 at once, then one a second (six clients'
 * worth), so a crowd of addresses gets no more than about 86,000 guesses a day per instance.
 */
export const LOGIN_LIMITS: ThrottleLimits = {
  perClient: { burst: 10, refillMs: 6_000 },
  global: { burst: 100, refillMs: 1_000 },
  maxClients: 4_096,
};

interface Bucket {
  tokens: number;
  at: number;
  /** The last attempt was refused (a refusal is logged once per throttled spell). */
  refused: boolean;
}

function level(bucket: Bucket, limits: BucketLimits, now: number): number {
  return Math.min(limits.burst, bucket.tokens + Math.max(0, now - bucket.at) / limits.refillMs);
}

function msUntilOne(bucket: Bucket, limits: BucketLimits, now: number): number {
  return Math.ceil((1 - level(bucket, limits, now)) * limits.refillMs);
}

function spend(bucket: Bucket, limits: BucketLimits, now: number): void {
  bucket.tokens = level(bucket, limits, now) - 1;
  bucket.at = now;
  bucket.refused = false;
}

function giveBack(bucket: Bucket, limits: BucketLimits, now: number): void {
  bucket.tokens = Math.min(limits.burst, level(bucket, limits, now) + 1);
  bucket.at = now;
}

export type Attempt =
  | { readonly allowed: true; /** The presented token was right: the attempt costs nothing. */ readonly succeeded: () => void }
  | {
      readonly allowed: false;
      readonly retryAfterMs: number;
      /** Whose limit: this client's, or every client's together. */
      readonly scope: 'client' | 'all clients';
      /** First refusal since the last allowed attempt of that scope (log it once). */
      readonly first: boolean;
    };

export interface LoginThrottle {
  /** One attempt by `client` at `now`: allowed (then check the token), or refused for `retryAfterMs`. */
  attempt(client: string, now: number): Attempt;
  /** Clients remembered (bounded by `maxClients`). */
  readonly clients: number;
}

export function createLoginThrottle(limits: ThrottleLimits = LOGIN_LIMITS): LoginThrottle {
  const global: Bucket = { tokens: limits.global.burst, at: 0, refused: false };
  const clients = new Map<string, Bucket>();

  /** The client's bucket, moved to the newest end of the table; the table pruned. */
  const bucketOf = (client: string, now: number): Bucket => {
    const bucket = clients.get(client) ?? { tokens: limits.perClient.burst, at: now, refused: false };
    clients.delete(client);
    forgetIdle(now);
    while (clients.size >= limits.maxClients) clients.delete(clients.keys().next().value!);
    clients.set(client, bucket);
    return bucket;
  };
  /** Drops, oldest first, clients whose bucket is full again: they are as if never seen. */
  const forgetIdle = (now: number): void => {
    for (const [client, bucket] of clients) {
      if (level(bucket, limits.perClient, now) < limits.perClient.burst) return;
      clients.delete(client);
    }
  };
  const refusal = (bucket: Bucket, bucketLimits: BucketLimits, scope: 'client' | 'all clients', now: number): Attempt => {
    const first = !bucket.refused;
    bucket.refused = true;
    return { allowed: false, retryAfterMs: msUntilOne(bucket, bucketLimits, now), scope, first };
  };

  return {
    attempt(client, now) {
      const own = bucketOf(client, now);
      if (level(own, limits.perClient, now) < 1) return refusal(own, limits.perClient, 'client', now);
      if (level(global, limits.global, now) < 1) return refusal(global, limits.global, 'all clients', now);
      spend(own, limits.perClient, now);
      spend(global, limits.global, now);
      return {
        allowed: true,
        succeeded: () => {
          giveBack(own, limits.perClient, now);
          giveBack(global, limits.global, now);
        },
      };
    },
    get clients() {
      return clients.size;
    },
  };
}
