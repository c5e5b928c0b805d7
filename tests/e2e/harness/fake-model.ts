// The e2e suites' view of the scripted model the demo also uses (src/local-dsh/scripted-model.ts).
export * from '../../../src/local-dsh/scripted-model';
