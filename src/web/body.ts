/**
 * Reads a request body up to a limit without ever holding more than the limit: a declared
 * `Content-Length` over it is refused before reading, and a streamed body is counted chunk
 * by chunk and cancelled as soon as it passes the limit.
 */

export type BoundedBody = { readonly ok: true; readonly bytes: Uint8Array } | { readonly ok: false };

export async function readBoundedBody(request: Request, limit: number): Promise<BoundedBody> {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  if (declared > limit) return { ok: false };
  if (!request.body) return { ok: true, bytes: new Uint8Array(0) };
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      return { ok: false };
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return { ok: true, bytes: chunks[0]! };
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { ok: true, bytes };
}
