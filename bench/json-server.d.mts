/** Starts a baseline server that answers 201 with what `answer` makes of the JSON body. */
export function serveJson<Body>(answer: (body: Body) => unknown): void
