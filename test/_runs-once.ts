// The line by which a test file says that every server it starts names its
// own store: such a file runs once, in the memory project, rather than once
// more per store with nothing different (vitest.config.ts). The servers'
// helpers check the claim (`checkRunsOnStoreUnderTest` in test/_spawn.ts).

/** The line, as a test file carries it. */
export const RUNS_ONCE = '// Runs once: every server here names its own store.'
