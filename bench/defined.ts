// Reads a value the benchmark expects to exist (an array element, a CLI argument, a regex group) and
// fails with a clear message when it does not, so indexed reads type-check under noUncheckedIndexedAccess.
export function defined<T>(value: T | undefined | null, what = 'value'): T {
  if (value === undefined || value === null) throw new Error(`${what} is missing`);
  return value;
}
