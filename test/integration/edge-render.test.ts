// sip/kamailio/render.sh's TLS client profile, the one the edge dials carriers with: carriers'
// certificates are verified against EDGE_TLS_CARRIER_CA unless EDGE_TLS_VERIFY_CARRIER=no; the
// carrier groups of EDGE_CARRIERS become dispatcher sets and a host → set route; a setting that
// cannot be met stops the render with a message instead of writing a config.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/config/index.js';
import { makeTestPki } from '../helpers/tls-certs.js';

const pki = makeTestPki();

function render(env: Record<string, string>): {
  status: number | null;
  stderr: string;
  tls: string | null;
  file(name: string): string;
  path(name: string): string;
} {
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
  const pathOf = (name: string): string => path.join(dir, name);
  return { status: r.status, stderr: r.stderr, tls, file: (name) => readFileSync(pathOf(name), 'utf8'), path: pathOf };
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
    // The chain is the TLS module's check; the host name is kamailio.cfg's (route[CARRIER_NAME]).
    expect(r.file('edge-settings.cfg')).toMatch(/^#!define WITH_CARRIER_NAME_CHECK$/m);
  });

  it('checks nothing with EDGE_TLS_VERIFY_CARRIER=no', () => {
    const r = render({ EDGE_TLS_VERIFY_CARRIER: 'no' });
    expect(r.status, r.stderr).toBe(0);
    expect(clientProfile(r.tls)).toMatch(/^verify_certificate = no$/m);
    expect(clientProfile(r.tls)).not.toContain('ca_list');
    expect(r.file('edge-settings.cfg')).not.toContain('WITH_CARRIER_NAME_CHECK');
  });

  it('renders a configuration Kamailio accepts with and without TLS, rtpengine and the carrier checks', () => {
    const variants: Record<string, string>[] = [
      { EDGE_TLS_CARRIER_CA: pki.caFile },
      { EDGE_TLS_VERIFY_CARRIER: 'no' },
      { EDGE_TLS_CARRIER_CA: pki.caFile, EDGE_RTPENGINE: '' },
      { EDGE_TLS_CERT: '', EDGE_TLS_KEY: '' },
      { EDGE_TLS_CERT: '', EDGE_TLS_KEY: '', EDGE_RTPENGINE: '' },
    ];
    for (const env of variants) {
      const r = render({ EDGE_NODES: '127.0.0.1:5070', EDGE_LISTEN: '127.0.0.1', ...env });
      expect(r.status, r.stderr).toBe(0);
      const check = spawnSync('kamailio', ['-c', '-f', r.path('kamailio.cfg')], { encoding: 'utf8' });
      expect(check.status, `${JSON.stringify(env)}: ${check.stderr}`).toBe(0);
    }
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

describe('edge carrier groups (render.sh EDGE_CARRIERS)', () => {
  const dispatcherLines = (list: string): string[] => list.split('\n').filter((l) => l && !l.startsWith('#'));

  it('puts each group in its own dispatcher set in priority order, unprobed, and maps its name (any case) to the set', () => {
    const r = render({
      EDGE_NODES: '127.0.0.1:5080',
      EDGE_CARRIERS: 'Carrier-A.example=192.0.2.10:5060,192.0.2.11:5061;transport=tcp carrier-b.example=gw.carrier-b.example:5061;transport=tls',
    });
    expect(r.status, r.stderr).toBe(0);
    expect(dispatcherLines(r.file('dispatcher.list'))).toEqual([
      '1 sip:127.0.0.1:5080 8 1',
      '10 sip:192.0.2.10:5060 0 2',
      '10 sip:192.0.2.11:5061;transport=tcp 0 1',
      '11 sip:gw.carrier-b.example:5061;transport=tls 0 1',
    ]);
    const route = r.file('carriers.cfg');
    expect(route).toContain('if ($(rd{s.tolower}) == "carrier-a.example") $var(carrier_set) = 10;');
    expect(route).toContain('if ($(rd{s.tolower}) == "carrier-b.example") $var(carrier_set) = 11;');
  });

  it('probes the gateways with EDGE_CARRIER_PROBE=yes, and writes an empty mapping without groups', () => {
    const probed = render({ EDGE_NODES: '127.0.0.1:5080', EDGE_CARRIERS: 'a.example=192.0.2.10:5060', EDGE_CARRIER_PROBE: 'yes' });
    expect(probed.status, probed.stderr).toBe(0);
    expect(dispatcherLines(probed.file('dispatcher.list'))).toContain('10 sip:192.0.2.10:5060 8 1');
    const none = render({ EDGE_NODES: '127.0.0.1:5080' });
    expect(none.status, none.stderr).toBe(0);
    expect(none.file('carriers.cfg')).not.toMatch(/carrier_set\) = \d\d/);
  });

  it.each([
    ['a group without gateways', { EDGE_CARRIERS: 'a.example' }, /NAME=GATEWAY/],
    ['a gateway without a port', { EDGE_CARRIERS: 'a.example=192.0.2.10' }, /not host:port/],
    ['an unknown transport', { EDGE_CARRIERS: 'a.example=192.0.2.10:5060;transport=sctp' }, /not host:port/],
    ['a probe setting that is not yes or no', { EDGE_CARRIERS: 'a.example=192.0.2.10:5060', EDGE_CARRIER_PROBE: 'maybe' }, /EDGE_CARRIER_PROBE/],
  ])('refuses %s', (_what, env, message) => {
    const r = render(env);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(message);
  });
});
