// The SIP-over-TLS listener's material, read from the PEM files configuration names (sip.tls).
import { readFileSync } from 'node:fs';
import type { Config } from '../config/index.js';
import type { TlsMaterial } from './sip/transports.js';

/** null when TLS is off (no certificate configured); throws naming the file that cannot be read. */
export function tlsListenerOf(c: Config['sip']['tls']): { port: number; material: TlsMaterial } | null {
  if (!c.certFile || !c.keyFile) return null;
  const read = (file: string, what: string): Buffer => {
    try {
      return readFileSync(file);
    } catch (err) {
      throw new Error(`sip.tls.${what} ${file}: ${(err as Error).message}`);
    }
  };
  return {
    port: c.port,
    material: {
      cert: read(c.certFile, 'certFile'),
      key: read(c.keyFile, 'keyFile'),
      ...(c.caFile ? { ca: read(c.caFile, 'caFile') } : {}),
      verifyServer: c.verifyServer,
    },
  };
}
