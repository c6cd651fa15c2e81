// Public door of stream/: the WebSocket stream server and its protocol constants.
export { attachStreamServer, MAX_PAYLOAD_FACTOR, type StreamServer, type StreamServerDeps } from './server.js';
export { CLOSE, parseClientMessage, type ClientMessage, type SocketErrorCode } from './protocol.js';
