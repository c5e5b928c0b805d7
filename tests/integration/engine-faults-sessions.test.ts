// Fault matrix over the operations that make, bind, claim, park and resume Works — createWork, bindList, claimNext,
// switchTo, waitForHuman, resume (tests/helpers/fault-matrix.ts): every Dida fault at every request position.
import { runFaultMatrix } from '../helpers/fault-matrix';

runFaultMatrix('sessions');
