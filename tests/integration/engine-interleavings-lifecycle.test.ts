// The person-edit interleaving matrix over the operations of a Work's life — create, claim, switch, wait, resume, sync,
// settle, review (tests/helpers/interleaving-matrix.ts).
import { runInterleavingMatrix } from '../helpers/interleaving-matrix';

runInterleavingMatrix('lifecycle');
