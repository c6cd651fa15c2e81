-- Up Migration
-- Media (issue 12).
-- calls.quality: the leg's final RTP/RTCP quality (packets, loss, jitter, round trip, MOS), written
-- when the leg ends, so GET /v1/sessions/{id} shows it after the call (a live leg's comes from the
-- node carrying it).
ALTER TABLE calls ADD COLUMN quality jsonb;
-- provider_connections.rtp_latching: which RTP sources a leg through this connection accepts
-- (telephony/rtp/source-latch.ts): 'nat' (the SDP source, or a NAT-rewritten one within the first
-- packets) or 'signalled' (the SDP source only: trunks that never sit behind NAT).
ALTER TABLE provider_connections ADD COLUMN rtp_latching text NOT NULL DEFAULT 'nat'
  CHECK (rtp_latching IN ('nat', 'signalled'));

-- Down Migration
ALTER TABLE provider_connections DROP COLUMN rtp_latching;
ALTER TABLE calls DROP COLUMN quality;
