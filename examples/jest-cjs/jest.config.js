// Jest's default CommonJS set-up with ts-jest. The sandbox and msw's own
// dependencies are ES modules: Jest loads them through require(esm), which
// needs Node 24.9 or later and --experimental-vm-modules (see package.json).
module.exports = {
  preset: 'ts-jest',
  testEnvironment: 'node',
}
