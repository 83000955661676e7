// Runs once: every server here names its own store.
// The fleet's property test again, on a Redis Cluster of three nodes: each
// replica pointed at another node, each account's list on the node its own
// hash tag names (apart from the sandbox's log), and a wave may move the
// sandbox's slot to the next node while its calls are answered.
process.env.FLEET_CLUSTER = '1'
await import('./fleet-properties.test.ts')
