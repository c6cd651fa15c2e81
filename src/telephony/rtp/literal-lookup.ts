// dgram's `lookup` option for media sockets: IP literals answered at once, host names by dns.lookup.
import type dgram from 'node:dgram';
import dns from 'node:dns';
import net from 'node:net';

export type DgramLookup = NonNullable<dgram.SocketOptions['lookup']>;

/**
 * The address lookup for media sockets. Node's dgram resolves the address of every send through
 * dns.lookup, which answers an IP literal only on the next tick: a closure, a queue entry and a
 * deferred send per packet, 100 packets a second per bridged call. RTP and RTCP go to IP literals
 * (from SDP or the latched source), answered here at once; a host name still goes to dns.lookup.
 */
export function literalLookup(): DgramLookup {
  let lastHost = '';
  let lastFamily = 0;
  return (hostname, options, callback) => {
    if (hostname !== lastHost) {
      const family = net.isIP(hostname);
      if (family === 0) {
        dns.lookup(hostname, options, callback);
        return;
      }
      lastHost = hostname;
      lastFamily = family;
    }
    callback(null, lastHost, lastFamily);
  };
}
