// What the benches' command lines and rounds share: a numeric `--name value` flag, and the median of a
// round's figures.

/** The number after `--name` on the command line, or `dflt` without the flag. */
export function numberArg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
}

/** The median (the upper one of an even count); NaN for none. */
export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
