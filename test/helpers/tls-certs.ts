// Test-only TLS material, generated at test time with `openssl` (nothing private is committed):
// a CA, a server certificate for 127.0.0.1, and client certificates from that CA and from a second,
// untrusted CA (mutual TLS accepted/refused).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface TestPki {
  dir: string;
  caFile: string;
  serverCert: string;
  serverKey: string;
  /** Issued by the CA: CN=carrier.test, SAN DNS:carrier.test. */
  clientCert: string;
  clientKey: string;
  /** Issued by another CA, same subject. */
  rogueCert: string;
  rogueKey: string;
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

export function makeTestPki(): TestPki {
  const dir = mkdtempSync(path.join(tmpdir(), 'vb-pki-'));
  const f = (n: string): string => path.join(dir, n);
  const ssl = (...args: string[]): void => {
    execFileSync('openssl', args, { stdio: 'pipe' });
  };
  const ca = (name: string): void => ssl('req', '-x509', ...EC, '-keyout', f(`${name}.key`), '-out', f(`${name}.pem`), '-days', '2', '-subj', `/CN=${name}`);
  const leaf = (name: string, cn: string, san: string, caName: string): void => {
    writeFileSync(f(`${name}.ext`), `subjectAltName=${san}\n`);
    ssl('req', ...EC, '-keyout', f(`${name}.key`), '-out', f(`${name}.csr`), '-subj', `/CN=${cn}`);
    ssl(
      'x509',
      '-req',
      '-in',
      f(`${name}.csr`),
      '-CA',
      f(`${caName}.pem`),
      '-CAkey',
      f(`${caName}.key`),
      '-CAcreateserial',
      '-out',
      f(`${name}.pem`),
      '-days',
      '2',
      '-extfile',
      f(`${name}.ext`),
    );
  };
  ca('test-ca');
  ca('rogue-ca');
  leaf('server', '127.0.0.1', 'IP:127.0.0.1', 'test-ca');
  leaf('client', 'carrier.test', 'DNS:carrier.test', 'test-ca');
  leaf('rogue', 'carrier.test', 'DNS:carrier.test', 'rogue-ca');
  return {
    dir,
    caFile: f('test-ca.pem'),
    serverCert: f('server.pem'),
    serverKey: f('server.key'),
    clientCert: f('client.pem'),
    clientKey: f('client.key'),
    rogueCert: f('rogue.pem'),
    rogueKey: f('rogue.key'),
  };
}
