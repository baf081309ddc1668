/**
 * A temporary home for token tests, removed when the scope closes.
 */
import * as Layer from "effect/Layer"
import { Home } from "../../src/Base/Home.ts"
import * as TestHome from "../support/TestHome.ts"

export const tempDir = TestHome.tempDir("wmcp-tokens-")

export const homeLayer = (dir: string) => Layer.effect(Home, Home.make(dir))

