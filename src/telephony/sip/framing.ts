// Input safety in front of the `sip` package's parser. Every byte from the network passes this
// linear-time scanner first: size caps (datagram, header block, single line, header count, body),
// strict Content-Length, start-line and header syntax. Only a message that passes reaches the
// package's regex parser, and always without leading whitespace and within the caps, so the
// parser's backtracking regexes never see unbounded or pathological input. A message that fails
// gets a final response naming the fault (RFC 3261 §8.2, §21.4; RFC 4475 cases) when it carries
// enough headers to be answered (§8.2.6.2: Via, From, To, Call-ID, CSeq copied).

export interface SipLimits {
  /** Largest UDP datagram accepted (RFC 3261 §18.1.1 expects big messages over TCP). */
  maxDatagramBytes: number;
  /** Start line plus headers, up to the blank line. */
  maxHeaderBytes: number;
  maxLineBytes: number;
  maxHeaderCount: number;
  maxBodyBytes: number;
}

export const DEFAULT_SIP_LIMITS: SipLimits = {
  maxDatagramBytes: 16_384,
  maxHeaderBytes: 16_384,
  maxLineBytes: 8_192,
  maxHeaderCount: 128,
  maxBodyBytes: 32_768,
};

/** A message the scanner refused, with the answer to give (null: not answerable, drop or close). */
export interface Rejection {
  status: number;
  reason: string;
  /** Short counter label (`bad_content_length`, `header_too_large`…). */
  fault: string;
  /** The response text, when the request carried enough headers to be answered. */
  reply: string | null;
}

export type FrameResult = { kind: 'message'; text: string; isRequest: boolean } | { kind: 'reject'; rejection: Rejection };

const COMPACT: Record<string, string> = {
  i: 'call-id',
  m: 'contact',
  e: 'content-encoding',
  l: 'content-length',
  c: 'content-type',
  f: 'from',
  s: 'subject',
  k: 'supported',
  t: 'to',
  v: 'via',
};

interface HeaderLine {
  name: string; // canonical lower-case long form
  raw: string; // the whole line as received (unfolded)
  value: string;
}

interface Scanned {
  startLine: string;
  headers: HeaderLine[];
}

// RFC 3261 §25.1 token characters, checked with a loop (no regex over network input).
const TOKEN = new Uint8Array(128);
for (const c of "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.!%*_+`'~") TOKEN[c.charCodeAt(0)] = 1;

export function isToken(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128 || !TOKEN[c]) return false;
  }
  return true;
}

function isDigits(s: string, max: number): boolean {
  if (s.length === 0 || s.length > max) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

class ScanError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    readonly fault: string,
  ) {
    super(reason);
  }
}

/** Splits a header block (no trailing blank line) into the start line and unfolded header lines. */
function scanHeaderBlock(block: string, limits: SipLimits): Scanned {
  let pos = 0;
  let startLine: string | null = null;
  const headers: HeaderLine[] = [];
  while (pos <= block.length) {
    let end = block.indexOf('\r\n', pos);
    if (end < 0) end = block.length;
    const line = block.slice(pos, end);
    pos = end + 2;
    if (line.length > limits.maxLineBytes) throw new ScanError(400, 'Header Line Too Long', 'line_too_long');
    if (startLine === null) {
      startLine = line;
      continue;
    }
    const first = line.charCodeAt(0);
    if (first === 32 || first === 9) {
      // Folded continuation (RFC 3261 §7.3.1): joins the previous header with one space.
      const prev = headers[headers.length - 1];
      if (!prev) throw new ScanError(400, 'Bad Header Folding', 'bad_header');
      prev.value = `${prev.value} ${line.trim()}`;
      prev.raw = `${prev.raw} ${line.trim()}`;
      if (prev.raw.length > limits.maxLineBytes) throw new ScanError(400, 'Header Line Too Long', 'line_too_long');
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) throw new ScanError(400, 'Malformed Header Line', 'bad_header');
    const rawName = line.slice(0, colon).trimEnd();
    if (!isToken(rawName)) throw new ScanError(400, 'Malformed Header Name', 'bad_header');
    if (headers.length >= limits.maxHeaderCount) throw new ScanError(400, 'Too Many Headers', 'too_many_headers');
    const lower = rawName.toLowerCase();
    headers.push({ name: COMPACT[lower] ?? lower, raw: line, value: line.slice(colon + 1).trim() });
  }
  return { startLine: startLine ?? '', headers };
}

const REPLY_HEADERS = ['via', 'from', 'to', 'call-id', 'cseq'];

/** A response built from the received header lines (§8.2.6.2), for requests the parser must not see. */
function buildReply(scan: Scanned, status: number, reason: string): string | null {
  const lines: string[] = [`SIP/2.0 ${status} ${reason}`];
  let hasVia = false;
  for (const h of scan.headers) {
    if (!REPLY_HEADERS.includes(h.name)) continue;
    if (h.name === 'via') hasVia = true;
    if (h.name === 'to' && !/;\s*tag\s*=/i.test(h.value)) lines.push(`${h.raw};tag=vbx${status}`);
    else lines.push(h.raw);
  }
  if (!hasVia) return null; // nowhere it could be routed back to (§18.2.2)
  lines.push('Content-Length: 0', '', '');
  return lines.join('\r\n');
}

function header(scan: Scanned, name: string): HeaderLine[] {
  return scan.headers.filter((h) => h.name === name);
}

/** The first value of a header checkRequest() found present ('' otherwise). */
function first(scan: Scanned, name: string): string {
  return header(scan, name)[0]?.value ?? '';
}

const headerTitle = (name: string): string => (name === 'cseq' ? 'CSeq' : name === 'call-id' ? 'Call-ID' : name.charAt(0).toUpperCase() + name.slice(1));

/** Start line and header syntax a request must have before any parser or lookup sees it. */
function checkRequest(scan: Scanned): number | null {
  const [method, uri, version, ...extra] = scan.startLine.split(' ');
  if (method === undefined || uri === undefined || version === undefined || extra.length > 0 || !isToken(method) || uri.length === 0) {
    throw new ScanError(400, 'Malformed Request Line', 'bad_request_line');
  }
  if (version.toUpperCase() !== 'SIP/2.0') {
    const v = version.slice(0, 4).toUpperCase() === 'SIP/' ? version.slice(4).split('.') : [];
    if (v.length === 2 && isDigits(v[0] ?? '', 3) && isDigits(v[1] ?? '', 3)) throw new ScanError(505, 'Version Not Supported', 'bad_version');
    throw new ScanError(400, 'Malformed Request Line', 'bad_request_line');
  }
  const colon = uri.indexOf(':');
  if (colon <= 0 || !isToken(uri.slice(0, colon))) throw new ScanError(400, 'Malformed Request-URI', 'bad_uri');
  const scheme = uri.slice(0, colon).toLowerCase();
  if (scheme !== 'sip' && scheme !== 'sips') throw new ScanError(416, 'Unsupported URI Scheme', 'unsupported_uri_scheme');
  for (const name of ['via', 'from', 'to', 'call-id', 'cseq']) {
    const found = header(scan, name);
    if (found.length === 0) throw new ScanError(400, `Missing ${headerTitle(name)} Header`, 'missing_header');
    if (name !== 'via' && found.length > 1) throw new ScanError(400, `Duplicate ${headerTitle(name)} Header`, 'duplicate_header');
  }
  const [seq, cseqMethod, ...cseqExtra] = first(scan, 'cseq').split(/[ \t]+/, 3);
  if (seq === undefined || cseqMethod === undefined || cseqExtra.length > 0 || !isDigits(seq, 10) || Number(seq) >= 2 ** 31 || !isToken(cseqMethod)) {
    throw new ScanError(400, 'Bad CSeq', 'bad_cseq');
  }
  if (cseqMethod !== method) throw new ScanError(400, 'CSeq Method Mismatch', 'bad_cseq');
  const via = first(scan, 'via');
  if (!via.slice(0, 24).replace(/\s/g, '').toUpperCase().startsWith('SIP/2.0/')) throw new ScanError(400, 'Bad Via', 'bad_via');
  const mf = header(scan, 'max-forwards');
  if (mf.length > 1 || (mf.length === 1 && !isDigits(mf[0]?.value ?? '', 3))) throw new ScanError(400, 'Bad Max-Forwards', 'bad_max_forwards');
  const callId = first(scan, 'call-id');
  if (callId.length === 0 || callId.includes(' ')) throw new ScanError(400, 'Bad Call-ID', 'bad_call_id');
  return null;
}

/** The declared Content-Length: null when absent; throws on a bad, conflicting or oversized value. */
function contentLength(scan: Scanned, limits: SipLimits): number | null {
  const values = header(scan, 'content-length');
  if (values.length === 0) return null;
  const firstValue = values[0]?.value ?? '';
  for (const v of values) {
    if (!isDigits(v.value, 10)) throw new ScanError(400, 'Bad Content-Length', 'bad_content_length');
    if (v.value !== firstValue && Number(v.value) !== Number(firstValue)) {
      throw new ScanError(400, 'Conflicting Content-Length', 'bad_content_length');
    }
  }
  const n = Number(firstValue);
  if (n > limits.maxBodyBytes) throw new ScanError(413, 'Request Entity Too Large', 'body_too_large');
  return n;
}

function reject(scan: Scanned | null, isRequest: boolean, e: ScanError): FrameResult {
  const reply = scan && isRequest && !scan.startLine.startsWith('ACK ') ? buildReply(scan, e.status, e.reason) : null;
  return { kind: 'reject', rejection: { status: e.status, reason: e.reason, fault: e.fault, reply } };
}

function isResponseLine(line: string): boolean {
  return line.slice(0, 4).toUpperCase() === 'SIP/' && line.indexOf(' ') > 0;
}

/**
 * Checks a header block (start line + headers, without the blank line) and returns the declared
 * body length, or the rejection. Shared by the datagram and the stream framers.
 */
export function checkHeaderBlock(block: string, limits: SipLimits): { scan: Scanned; isRequest: boolean; length: number | null } | { rejected: FrameResult } {
  let scan: Scanned | null = null;
  let isRequest = true;
  try {
    scan = scanHeaderBlock(block, limits);
    isRequest = !isResponseLine(scan.startLine);
    if (isRequest) checkRequest(scan);
    const length = contentLength(scan, limits);
    return { scan, isRequest, length };
  } catch (e) {
    if (!(e instanceof ScanError)) throw e;
    return { rejected: reject(scan, isRequest, e) };
  }
}

const CRLF2 = '\r\n\r\n';

/** Index just past leading CR/LF keep-alives (RFC 5626 §3.5.1 pings are "\r\n\r\n"). */
export function skipLeadingCrlf(s: string, from = 0): number {
  let i = from;
  while (i < s.length && (s.charCodeAt(i) === 13 || s.charCodeAt(i) === 10)) i++;
  return i;
}

/** One UDP datagram → a message for the parser, a rejection, or null (keep-alive, empty). */
export function frameDatagram(data: Buffer, limits: SipLimits): FrameResult | null {
  if (data.length > limits.maxDatagramBytes) {
    return { kind: 'reject', rejection: { status: 513, reason: 'Message Too Large', fault: 'datagram_too_large', reply: null } };
  }
  const s = data.toString('latin1');
  const start = skipLeadingCrlf(s);
  if (start === s.length) return null;
  const end = s.indexOf(CRLF2, start);
  if (end < 0 || end - start > limits.maxHeaderBytes) {
    const fault = end < 0 ? 'no_header_end' : 'header_too_large';
    return { kind: 'reject', rejection: { status: 400, reason: end < 0 ? 'Missing Header Terminator' : 'Header Block Too Large', fault, reply: null } };
  }
  const block = s.slice(start, end);
  const checked = checkHeaderBlock(block, limits);
  if ('rejected' in checked) return checked.rejected;
  const rest = s.length - (end + 4);
  let bodyLength = rest;
  if (checked.length !== null) {
    // §18.3: a datagram shorter than its Content-Length is discarded (answered 400 for requests);
    // bytes past it are ignored.
    if (checked.length > rest) {
      return reject(checked.scan, checked.isRequest, new ScanError(400, 'Content-Length Exceeds Message', 'bad_content_length'));
    }
    bodyLength = checked.length;
  }
  if (bodyLength > limits.maxBodyBytes) return reject(checked.scan, checked.isRequest, new ScanError(413, 'Request Entity Too Large', 'body_too_large'));
  return { kind: 'message', text: `${block}${CRLF2}${s.slice(end + 4, end + 4 + bodyLength)}`, isRequest: checked.isRequest };
}

/**
 * Frames a TCP byte stream (RFC 3261 §18.3: Content-Length is mandatory on streams). Linear: each
 * byte is searched for the header terminator once; the buffer never exceeds header cap + body cap.
 */
export class StreamFramer {
  private buf = '';
  private searchFrom = 0;
  private awaiting: { total: number; rejection: FrameResult | null } | null = null;
  private awaitingRequest = true;
  /** After a rejection that loses framing, nothing more is read from this stream. */
  broken = false;

  constructor(private readonly limits: SipLimits) {}

  /** Bytes of an incomplete message waiting (slow-sender timer runs while > 0). */
  get pending(): number {
    return this.buf.length;
  }

  /** Feeds a chunk; returns the complete messages and rejections it finished, in order. */
  push(chunk: Buffer): FrameResult[] {
    if (this.broken) return [];
    this.buf += chunk.toString('latin1');
    const out: FrameResult[] = [];
    for (;;) {
      if (this.awaiting) {
        // Header block already checked once: only wait for the body bytes.
        if (this.buf.length < this.awaiting.total) return out;
        const { total, rejection } = this.awaiting;
        this.awaiting = null;
        out.push(rejection ?? { kind: 'message', text: this.buf.slice(0, total), isRequest: this.awaitingRequest });
        this.consume(total);
        continue;
      }
      const start = skipLeadingCrlf(this.buf);
      if (start > 0) {
        this.buf = this.buf.slice(start);
        this.searchFrom = 0;
      }
      if (this.buf.length === 0) return out;
      const end = this.buf.indexOf(CRLF2, this.searchFrom);
      if (end < 0) {
        if (this.buf.length > this.limits.maxHeaderBytes) return this.fail(out, tooLarge());
        this.searchFrom = Math.max(0, this.buf.length - 3);
        return out;
      }
      if (end > this.limits.maxHeaderBytes) return this.fail(out, tooLarge());
      const block = this.buf.slice(0, end);
      const checked = checkHeaderBlock(block, this.limits);
      if ('rejected' in checked) {
        // Framing is only trustworthy with a valid Content-Length; otherwise close after answering.
        const r = checked.rejected;
        if (r.kind === 'reject' && r.rejection.fault === 'bad_content_length') return this.fail(out, r);
        const len = contentLengthOrNull(block, this.limits);
        if (len === null) return this.fail(out, r);
        this.awaiting = { total: end + 4 + len, rejection: r };
        continue;
      }
      if (checked.length === null) {
        return this.fail(out, reject(checked.scan, checked.isRequest, new ScanError(400, 'Missing Content-Length', 'missing_content_length')));
      }
      this.awaiting = { total: end + 4 + checked.length, rejection: null };
      this.awaitingRequest = checked.isRequest;
    }
  }

  private consume(n: number): void {
    this.buf = this.buf.slice(n);
    this.searchFrom = 0;
  }

  private fail(out: FrameResult[], r: FrameResult): FrameResult[] {
    this.broken = true;
    this.buf = '';
    out.push(r);
    return out;
  }
}

function tooLarge(): FrameResult {
  return { kind: 'reject', rejection: { status: 400, reason: 'Header Block Too Large', fault: 'header_too_large', reply: null } };
}

/** Content-Length of a header block the scanner rejected for another reason (to skip its body). */
function contentLengthOrNull(block: string, limits: SipLimits): number | null {
  try {
    return contentLength(scanHeaderBlock(block, limits), limits);
  } catch {
    return null;
  }
}
