// Public door of coord/: what nodes share through Redis — session ownership claims, the session
// command bus and its request/reply layer, stream tokens and the node heartbeat (see README.md here).
export { createRedis } from './redis.js';
export { OWNERS_SEEN_KEY, SessionOwnership, claimsNotRefreshedSince, forgetClaimHistory, ownerOf, type OwnerClaim, type SipContact } from './ownership.js';
export {
  publishSessionCommand,
  replyChannel,
  sessionChannel,
  subscribeSessionCommands,
  type ForwardedCommand,
  type SessionCommand,
  type SessionReply,
} from './session-bus.js';
export { RemoteCommandError, RemoteCommandTimeout, SessionRpc, type CommandExecutor, type SessionRpcOptions } from './session-rpc.js';
export {
  NodeHeartbeat,
  listNodes,
  liveLegsOf,
  type HeartbeatSources,
  type LegSnapshot,
  type NodeRecord,
  type NodeView,
  type SttPoolUse,
} from './node-heartbeat.js';
export { issueStreamToken, resolveStreamToken, revokeStreamToken, type IssuedStreamToken } from './stream-tokens.js';
