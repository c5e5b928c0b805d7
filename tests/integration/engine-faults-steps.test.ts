// Fault matrix over the operations that write steps and progress (tests/helpers/fault-matrix.ts): every Dida fault at every request position.
import { runFaultMatrix } from '../helpers/fault-matrix';

runFaultMatrix('steps');
