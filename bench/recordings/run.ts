// Recording and analysis figures (printed, never asserted; BENCHMARKS.md "Recordings and analysis"):
//   1. lame encode time per minute of 8 kHz mono audio (16 kbps MP3)
//   2. memory and disk per concurrent recorded call, N calls recorded at once in real time
//      (3 TimelineTracks per call — agent, customer, mixed — fed 20 ms frames on a timer, as the taps do)
//   3. analysis time of a 10-minute transcript (every part, default profile)
// Usage: nice -n 10 npx tsx bench/recordings/run.ts [calls=100] [seconds=20]
import { mkdtemp, rm, stat, readdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { writeFile } from 'node:fs/promises';
import { encodeWav } from '../../src/media/index.js';
import { encodeMp3, TimelineTrack } from '../../src/recordings/index.js';
import { analyseTranscript, ANALYSIS_PARTS, type AnalysisTurn } from '../../src/analysis/index.js';
import { defined } from '../defined.js';

const calls = Number(process.argv[2] ?? 100);
const seconds = Number(process.argv[3] ?? 20);
const dir = await mkdtemp(path.join(os.tmpdir(), 'vb-bench-rec-'));

function speechLike(samples: number): Int16Array {
  const pcm = new Int16Array(samples);
  let x = 1;
  for (let i = 0; i < samples; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    const envelope = Math.abs(Math.sin((i / 8000) * Math.PI * 1.5)); // syllable-ish bursts
    pcm[i] = Math.round((((x >> 8) % 8000) - 4000) * envelope + 3000 * Math.sin(i / 6) * envelope);
  }
  return pcm;
}

// 1. Encode time per audio minute.
{
  const minutes = 5;
  const wav = path.join(dir, 'enc.wav');
  await writeFile(wav, encodeWav(speechLike(minutes * 60 * 8000), 8000));
  const t0 = performance.now();
  await encodeMp3(wav, path.join(dir, 'enc.mp3'), 16);
  const ms = performance.now() - t0;
  const size = (await stat(path.join(dir, 'enc.mp3'))).size;
  console.log(
    `encode: ${minutes} min of audio in ${ms.toFixed(0)} ms → ${(ms / minutes).toFixed(0)} ms per audio minute; MP3 ${(size / minutes / 1024).toFixed(0)} KiB per minute`,
  );
}

// 2. N concurrent recorded calls in real time.
{
  global.gc?.();
  const rss0 = process.memoryUsage().rss;
  const heap0 = process.memoryUsage().heapUsed;
  const callDirs: string[] = [];
  const tracks: TimelineTrack[][] = [];
  for (let c = 0; c < calls; c++) {
    const d = path.join(dir, `call${c}`);
    callDirs.push(d);
    await (await import('node:fs/promises')).mkdir(d);
    tracks.push(['agent', 'customer', 'mixed'].map((ch) => new TimelineTrack(path.join(d, `${ch}.wav`))));
  }
  const frame = speechLike(160);
  const start = performance.now();
  let ticks = 0;
  let maxRss = rss0;
  let lagMax = 0;
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const now = performance.now() - start;
      const due = Math.floor(now / 20);
      lagMax = Math.max(lagMax, now - ticks * 20);
      while (ticks < due) {
        const at = ticks * 20;
        for (const [agent, customer, mixed] of tracks) {
          // The parties alternate every 3 s, as in a conversation.
          const who = defined(Math.floor(at / 3000) % 2 === 0 ? agent : customer, 'party track');
          who.add(at, frame);
          defined(mixed, 'mixed track').add(at, frame);
        }
        ticks++;
      }
      maxRss = Math.max(maxRss, process.memoryUsage().rss);
      if (now >= seconds * 1000) {
        clearInterval(timer);
        resolve();
      }
    }, 20);
  });
  const heap1 = process.memoryUsage().heapUsed;
  await Promise.all(tracks.flat().map((t) => t.close(seconds * 1000)));
  let bytes = 0;
  for (const d of callDirs) for (const f of await readdir(d)) bytes += (await stat(path.join(d, f))).size;
  console.log(`record: ${calls} concurrent calls × 3 channels for ${seconds} s (real time)`);
  console.log(
    `  memory: RSS +${((maxRss - rss0) / 1024 / 1024).toFixed(1)} MiB peak (${((maxRss - rss0) / calls / 1024).toFixed(0)} KiB per call), heap +${((heap1 - heap0) / calls / 1024).toFixed(0)} KiB per call`,
  );
  console.log(`  disk: ${(bytes / calls / (seconds / 60) / 1024).toFixed(0)} KiB per call per minute of WAV while recording (deleted once encoded)`);
  console.log(`  worst timer lag ${lagMax.toFixed(0)} ms`);
}

// 3. Analysis of a 10-minute transcript.
{
  const pool = [
    'I would like to check my account balance please',
    'Sure, I can help you with that, let me pull up your account',
    'This is the third time I am calling about the same problem and it is really frustrating',
    'I am sorry to hear that, I will make sure it gets fixed today',
    'Can you send me a confirmation email with the reference number',
    'The charge on my card from last month looks wrong to me',
    'I understand, I will open a dispute for that charge right away',
    'Thank you, that is very helpful',
  ];
  const turns: AnalysisTurn[] = [];
  let t = 0;
  for (let i = 0; t < 600; i++) {
    const text = `${pool[i % pool.length]}. ${pool[(i * 3 + 1) % pool.length]}.`;
    const dur = text.split(' ').length / 2.5;
    turns.push({ sequence: i + 1, speaker: i % 2 ? 'agent' : 'customer', language: 'en', text, translation: null, startTime: t, endTime: t + dur });
    t += dur + 0.7;
  }
  const words = turns.reduce((a, x) => a + x.text.split(' ').length, 0);
  analyseTranscript(turns, { include: ANALYSIS_PARTS, profile: 'default', rules: { required_disclosures: ['this call is recorded'] } }); // warm-up
  const runs = 10;
  const t0 = performance.now();
  for (let i = 0; i < runs; i++)
    analyseTranscript(turns, { include: ANALYSIS_PARTS, profile: 'default', rules: { required_disclosures: ['this call is recorded'] } });
  console.log(`analysis: 10-minute transcript (${turns.length} turns, ${words} words) in ${((performance.now() - t0) / runs).toFixed(1)} ms`);
}

await rm(dir, { recursive: true, force: true });
