export { SafeEmitter, type ListenerErrorHook } from './safe-emitter.js';
