// audio.output frames written straight to the kernel. `ws.send` takes each frame through Node's stream
// machinery (a cork, two writes, a writev request, its callback), which at 20,000 frames a second cost
// the event loop as much again as the send(2) itself (BENCHMARKS.md, twenty-eighth pass). Here the frame
// (RFC 6455 §5.2: FIN, text, unmasked as a server's are) is built in one buffer and sent by the addon.
//
// Order is kept because this writes only while Node's buffer for the socket is empty, on the thread that
// makes every other write: a frame the kernel refuses goes to `ws.send` whole, and the rest of a frame
// it took in part goes to the socket's own queue at once, ahead of anything written later.
import type { Socket } from 'node:net';
import { fdOf, tcpSendQueueAddon, type TcpSendQueueAddon } from './tcp-send-queue.js';

export type DirectSendResult =
  /** The whole frame is in the kernel. */
  | 'sent'
  /** Part of it is; the rest waits in Node's buffer and `onQueuedWritten` is called when it has gone. */
  | 'queued'
  /** Nothing was written: send it the usual way (`ws.send`). */
  | 'refused';

const HEADER_BYTES = 4; // FIN+opcode, 126, 16-bit length: payloads of 126 to 65,535 bytes
const MAX_PAYLOAD_BYTES = 65_535;
/** One frame at a time, built and sent before the next: shared by every connection of the process. */
let stage: Buffer | undefined;

export class DirectTextSender {
  private constructor(
    private readonly socket: Socket,
    /** Read once: a live socket keeps its descriptor, and reading it is a call into C++. */
    private readonly fd: number,
    private readonly addon: TcpSendQueueAddon,
  ) {}

  /** A sender for `socket`, or null where frames cannot be written directly (no addon, TLS). */
  static for(socket: Socket): DirectTextSender | null {
    const addon = tcpSendQueueAddon();
    const fd = fdOf(socket);
    return addon && fd !== null ? new DirectTextSender(socket, fd, addon) : null;
  }

  /** Writes `text` as one WebSocket text frame, if it can without reordering anything. */
  send(text: string, onQueuedWritten: (err?: Error | null) => void): DirectSendResult {
    const socket = this.socket;
    // A destroyed socket's descriptor is closed at once (and may belong to another socket by now).
    if (socket.destroyed || socket.writableLength > 0 || text.length < 126 || text.length * 3 > MAX_PAYLOAD_BYTES) return 'refused';
    stage ??= Buffer.allocUnsafe(HEADER_BYTES + MAX_PAYLOAD_BYTES);
    const payloadBytes = stage.write(text, HEADER_BYTES, 'utf8');
    stage[0] = 0x81;
    stage[1] = 126;
    stage.writeUInt16BE(payloadBytes, 2);
    const frameBytes = HEADER_BYTES + payloadBytes;
    const sent = this.addon.sendNow(this.fd, stage, frameBytes);
    if (sent === frameBytes) return 'sent';
    if (sent <= 0) return 'refused'; // -EAGAIN: the kernel's bound is reached; any other error: Node's own write reports it
    socket.write(Buffer.from(stage.subarray(sent, frameBytes)), onQueuedWritten);
    return 'queued';
  }
}
