// The heartbeat's leg list written item by item must be byte for byte what JSON.stringify writes.
import { describe, expect, it } from 'vitest';
import { jsonArrayBuffer } from '../../../src/coord/node-heartbeat.js';

const same = (items: object[]): void => {
  const out = jsonArrayBuffer(items);
  expect(out.equals(Buffer.from(JSON.stringify(items)))).toBe(true);
  expect(JSON.parse(out.toString('utf8'))).toEqual(items);
};

describe('jsonArrayBuffer', () => {
  it('writes an empty list and a single item', () => {
    same([]);
    same([{ id: 'call_1', quality: { mos: 4.2, loss: 0 } }]);
  });

  it('writes multi-byte characters, escapes and nested values as JSON.stringify does', () => {
    same([
      { id: 'call_1', from: 'Zoë "Z" Müller', to: '東京 📞', note: 'line\nbreak\\tab\t' },
      { id: 'call_2', list: [1, 2.5, null, true], nested: { deep: { value: -0.001 } } },
      { id: 'call_3', from: '' },
    ]);
  });

  it('writes 400 legs, the size that made one string a large object', () => {
    const legs = Array.from({ length: 400 }, (_, i) => ({
      id: `call_${i}`,
      session_id: `sess_${i}`,
      caller: `+1555000${i}`,
      quality: { jitter_ms: i / 7, packets: i * 50 },
    }));
    same(legs);
  });
});
