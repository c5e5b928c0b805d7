// The e2e suites' view of the cached dsh install the demo also uses (src/local-dsh/dsh-install.ts).
export * from '../../../src/local-dsh/dsh-install';
