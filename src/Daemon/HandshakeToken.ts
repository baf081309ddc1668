/**
 * The handshake file publishes the bridge token: this adapts `BridgeToken` to the handshake writer.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { BridgeToken } from "../Auth/BridgeToken.ts"
import { HandshakeToken } from "./Serve.ts"

const toHandshake = (credential: { readonly token: string; readonly expiresAt: number }) => ({
  token: credential.token,
  expiresAt: new Date(credential.expiresAt)
})

/** @category layers */
export const layer: Layer.Layer<HandshakeToken, never, BridgeToken> = Layer.effect(
  HandshakeToken,
  Effect.map(BridgeToken, (bridge) =>
    HandshakeToken.of({
      current: Effect.map(SubscriptionRef.get(bridge.current), toHandshake),
      // `changes` starts with the current value, which the writer has already written.
      changes: bridge.changes.pipe(Stream.drop(1), Stream.map(toHandshake))
    }))
)
