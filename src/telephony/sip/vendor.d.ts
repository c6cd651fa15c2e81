// Types for the parts of the npm `sip` package (0.0.6, no bundled types) that voxbridge uses.
declare module 'sip' {
  export interface SipUri {
    schema: string;
    user?: string;
    password?: string;
    host: string;
    port?: number;
    params: Record<string, string | null>;
    headers: Record<string, string>;
  }
  export interface NameAddr {
    name?: string;
    uri: string | SipUri;
    params: Record<string, string | null | undefined>;
  }
  export interface Via {
    version?: string;
    protocol?: string;
    host?: string;
    port?: number;
    params: Record<string, string | null | undefined>;
  }
  export interface SipHeaders {
    via: Via[];
    to: NameAddr;
    from: NameAddr;
    'call-id': string;
    cseq: { seq: number; method: string };
    contact?: NameAddr[] | '*';
    'record-route'?: NameAddr[];
    route?: NameAddr[];
    'content-type'?: string;
    'content-length'?: number;
    'max-forwards'?: string | number;
    [name: string]: unknown;
  }
  export interface SipRequest {
    method: string;
    uri: string | SipUri;
    version?: string;
    headers: SipHeaders;
    content?: string;
  }
  export interface SipResponse {
    status: number;
    reason: string;
    version?: string;
    headers: SipHeaders;
    content?: string;
  }
  export type SipMessage = SipRequest | SipResponse;
  export interface Remote {
    protocol: string;
    address: string;
    port: number;
    local?: { address: string; port: number };
    /** Set by voxbridge's TLS transport: the peer's certificate as presented in the handshake. */
    tls?: { authorized: boolean; authorizationError?: string; peerCertificate?: Buffer };
    /** Set by voxbridge behind a trusted edge: the caller's media to the edge is SRTP, which the edge terminates. */
    edgeSrtp?: boolean;
  }
  export interface CreateOptions {
    port?: number;
    address?: string;
    udp?: boolean;
    tcp?: boolean;
    publicAddress?: string;
    hostname?: string;
    rport?: boolean;
    logger?: { send?: (m: SipMessage, target: unknown) => void; recv?: (m: SipMessage, remote: Remote) => void; error?: (e: unknown) => void };
  }
  export interface SipStack {
    send(m: SipMessage, callback?: (rs: SipResponse) => void): void;
    destroy(): void;
    hostname(): string;
  }
  export function create(options: CreateOptions, onRequest: (rq: SipRequest, remote: Remote) => void): SipStack;
  export interface ServerTransaction {
    send(m: SipMessage): void;
    message?(m: SipMessage, remote?: Remote): void;
    shutdown(): void;
  }
  export interface ClientTransaction {
    message(m: SipMessage, remote?: Remote): void;
    shutdown(): void;
  }
  export interface TransactionConnection {
    send(m: SipMessage): void;
    release(): void;
    protocol: string;
  }
  export interface TransactionLayer {
    createServerTransaction(rq: SipRequest, cn: TransactionConnection): ServerTransaction;
    createClientTransaction(cn: TransactionConnection, rq: SipRequest, callback: (rs: SipResponse) => void): ClientTransaction;
    getServer(m: SipMessage): ServerTransaction | undefined;
    getClient(m: SipMessage): ClientTransaction | undefined;
    destroy(): void;
  }
  export function makeTransactionLayer(options: object, open: (target: Remote, onError?: (e: Error) => void) => TransactionConnection): TransactionLayer;
  export function resolve(uri: SipUri, action: (addresses: Remote[]) => void): void;
  export function makeResponse(
    rq: SipRequest,
    status: number,
    reason?: string,
    extension?: { headers?: Record<string, unknown>; content?: string },
  ): SipResponse;
  export function parseUri(s: string | SipUri): SipUri | undefined;
  export function stringifyUri(u: string | SipUri): string;
  export function parse(s: string | Buffer): SipMessage | undefined;
  export function stringify(m: SipMessage): string;
  export function copyMessage<T extends SipMessage>(m: T, deep?: boolean): T;
  export function generateBranch(): string;
  const sip: {
    create: typeof create;
    makeResponse: typeof makeResponse;
    parseUri: typeof parseUri;
    stringifyUri: typeof stringifyUri;
    parse: typeof parse;
    stringify: typeof stringify;
    copyMessage: typeof copyMessage;
    generateBranch: typeof generateBranch;
    makeTransactionLayer: typeof makeTransactionLayer;
    resolve: typeof resolve;
  };
  export default sip;
}

declare module 'sip/digest.js' {
  import type { SipRequest, SipResponse } from 'sip';
  export interface DigestSession {
    realm?: string;
    [k: string]: unknown;
  }
  export interface Credentials {
    user: string;
    password?: string;
    realm?: string;
    hash?: string;
  }
  export function challenge(session: DigestSession, rs: SipResponse): SipResponse;
  export function authenticateRequest(session: DigestSession, rq: SipRequest, creds?: Credentials): boolean;
  export function signRequest(session: DigestSession, rq: SipRequest, rs?: SipResponse, creds?: Credentials): SipRequest;
  const digest: {
    challenge: typeof challenge;
    authenticateRequest: typeof authenticateRequest;
    signRequest: typeof signRequest;
  };
  export default digest;
}
