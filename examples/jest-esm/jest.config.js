// Jest in ESM mode (Node's --experimental-vm-modules, see package.json):
// plain JavaScript needs no transform at all.
export default {
  testEnvironment: 'node',
  transform: {},
}
