// The parsing lives in common/ (WebSocket upgrades read it too); auth keeps this name for its imports.
export { bearerOf } from '../common/bearer';
