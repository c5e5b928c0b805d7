// Fault matrix, first half of the operations (tests/helpers/fault-matrix.ts): every Dida fault at every request position.
import { runFaultMatrix } from '../helpers/fault-matrix';

runFaultMatrix('first');
