// The node flags production starts the gateway with (scripts/lib/node-heap-flags.sh reads HEAP_SEMI_SPACE_MB,
// as scripts/run.sh and the image do), for the benches' gateway processes: they measure what runs.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export function nodeHeapFlags(): string[] {
  const script = fileURLToPath(new URL('../scripts/lib/node-heap-flags.sh', import.meta.url));
  return execFileSync('bash', [script], { encoding: 'utf8' }).split(/\s+/).filter(Boolean);
}
