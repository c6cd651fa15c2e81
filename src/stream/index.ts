// Public door of stream/: the WebSocket stream server and its protocol constants.
export { attachStreamServer, SOCKET_MESSAGE_HARD_CAP_BYTES, socketMaxPayload, type StreamServer, type StreamServerDeps } from './server.js';
export { registerStreamMetrics } from './metrics.js';
export { CLOSE, parseClientMessage, type ClientMessage, type SocketErrorCode } from './protocol.js';
