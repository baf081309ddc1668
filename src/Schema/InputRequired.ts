/**
 * Input required from the user before a request can finish: the elicitation requests to show and
 * the signed `requestState` that resumes the request. One model for every layer: first access and
 * the approval flow answer it, the catalogue's handlers return it, the endpoint sends it as an
 * `input_required` result (modern era only). It is a value, never an error.
 *
 * @since 0.1.0
 */

/** @category models */
export interface InputRequired<R extends Readonly<Record<string, unknown>> = Readonly<Record<string, unknown>>> {
  readonly _tag: "InputRequired"
  readonly inputRequests: R
  readonly requestState: string
}

/** @category constructors */
export const make = <R extends Readonly<Record<string, unknown>>>(inputRequests: R, requestState: string): InputRequired<R> => ({
  _tag: "InputRequired",
  inputRequests,
  requestState
})

/** @category predicates */
export const is = (u: unknown): u is InputRequired =>
  typeof u === "object" && u !== null && (u as { readonly _tag?: unknown })._tag === "InputRequired"
