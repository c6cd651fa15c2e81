export { SIGNATURE_HEADER, signatureHeader } from './signature.js';
