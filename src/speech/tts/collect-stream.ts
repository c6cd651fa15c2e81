// Streaming TTS adapters also answer the whole-utterance `synthesize()`: the streamed chunks, joined.
export async function collectPcm(chunks: AsyncIterable<Int16Array>): Promise<Int16Array> {
  const parts: Int16Array[] = [];
  for await (const p of chunks) parts.push(p);
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}
