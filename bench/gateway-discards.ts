// The audio a gateway's jitter buffers lost, from its media counters (telephony mediaStats): every frame
// they removed or got too late, less the quiet ones taken out of pauses (`silenceTrimmed`, within
// `dropped`), which shorten silence and lose nothing. `count` reads one counter (or its change over a window).
export const audioDiscarded = (count: (counter: string) => number): number => count('dropped') - count('silenceTrimmed') + count('late');
