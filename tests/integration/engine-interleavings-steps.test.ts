// The person-edit interleaving matrix over the operations on steps, direct and written in the background (tests/helpers/interleaving-matrix.ts).
import { runInterleavingMatrix } from '../helpers/interleaving-matrix';

runInterleavingMatrix('steps');
