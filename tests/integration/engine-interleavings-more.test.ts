// The person-edit interleaving matrix, second half of the operations (tests/helpers/interleaving-matrix.ts).
import { runInterleavingMatrix } from '../helpers/interleaving-matrix';

runInterleavingMatrix('second');
