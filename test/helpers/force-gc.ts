// A full garbage collection from inside a test, for "no reference kept" checks with WeakRef: the
// flag is set at run time (vitest's workers start without --expose-gc), and the collection runs after
// the current job, since a WeakRef's target is kept alive until the job that created it ends.
import v8 from 'node:v8';
import vm from 'node:vm';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

export async function collectGarbage(): Promise<void> {
  await new Promise((r) => setTimeout(r, 0));
  gc();
}
