// sip/kamailio/render.sh's TLS client profile, the one the edge dials carriers with: carriers'
// certificates are verified against EDGE_TLS_CARRIER_CA unless EDGE_TLS_VERIFY_CARRIER=no, and a
// setting that cannot be met stops the render with a message instead of writing a config.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/config/index.js';
import { makeTestPki } from '../helpers/tls-certs.js';

const pki = makeTestPki();

function render(env: Record<string, string>): { status: number | null; stderr: string; tls: string | null } {
  const dir = mkdtempSync(path.join(tmpdir(), 'vb-render-'));
  const r = spawnSync('bash', [path.join(packageRoot, 'sip/kamailio/render.sh'), dir], {
    env: { PATH: process.env.PATH ?? '', EDGE_RTPENGINE: '127.0.0.1:22222', EDGE_TLS_CERT: pki.serverCert, EDGE_TLS_KEY: pki.serverKey, ...env },
    encoding: 'utf8',
  });
  let tls: string | null = null;
  try {
    tls = readFileSync(path.join(dir, 'tls.cfg'), 'utf8');
  } catch {
    tls = null;
  }
  return { status: r.status, stderr: r.stderr, tls };
}

/** The `[client:default]` section of a tls.cfg. */
const clientProfile = (tls: string | null): string => (tls ?? '').split('[client:default]')[1]?.split(/\n\[/)[0] ?? '';

describe('edge TLS client profile (render.sh)', () => {
  it('verifies carriers against EDGE_TLS_CARRIER_CA', () => {
    const r = render({ EDGE_TLS_CARRIER_CA: pki.caFile });
    expect(r.status, r.stderr).toBe(0);
    const client = clientProfile(r.tls);
    expect(client).toMatch(/^verify_certificate = yes$/m);
    expect(client).toMatch(/^require_certificate = yes$/m);
    expect(client).toContain(`ca_list = ${pki.caFile}`);
  });

  it('checks nothing with EDGE_TLS_VERIFY_CARRIER=no', () => {
    const r = render({ EDGE_TLS_VERIFY_CARRIER: 'no' });
    expect(r.status, r.stderr).toBe(0);
    expect(clientProfile(r.tls)).toMatch(/^verify_certificate = no$/m);
    expect(clientProfile(r.tls)).not.toContain('ca_list');
  });

  it('refuses a carrier CA that is not a readable file, and a verify setting that is not yes or no', () => {
    const missing = render({ EDGE_TLS_CARRIER_CA: '/nonexistent/ca.pem' });
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain("EDGE_TLS_CARRIER_CA names '/nonexistent/ca.pem'");
    const bad = render({ EDGE_TLS_VERIFY_CARRIER: 'maybe' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('EDGE_TLS_VERIFY_CARRIER must be yes or no');
  });
});
