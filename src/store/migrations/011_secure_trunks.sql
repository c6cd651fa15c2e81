-- Secure trunks (issue 11): SIP over TLS to and from a provider connection, a connection that
-- only takes TLS + SRTP calls, and mutual TLS (a client certificate checked per connection).
ALTER TABLE provider_connections DROP CONSTRAINT IF EXISTS provider_connections_transport_check;
ALTER TABLE provider_connections ADD CONSTRAINT provider_connections_transport_check CHECK (transport IN ('udp', 'tcp', 'tls'));
-- Calls from this connection must arrive over TLS and offer SRTP (RTP/SAVP with a=crypto).
ALTER TABLE provider_connections ADD COLUMN require_secure boolean NOT NULL DEFAULT false;
-- Mutual TLS: calls from this connection must present a client certificate issued by tls_client_ca
-- (PEM; null: the listener's sip.tls CA) whose subject CN or a DNS/URI SAN equals tls_client_subject (null: any).
ALTER TABLE provider_connections ADD COLUMN require_client_cert boolean NOT NULL DEFAULT false;
ALTER TABLE provider_connections ADD COLUMN tls_client_ca text;
ALTER TABLE provider_connections ADD COLUMN tls_client_subject text;
