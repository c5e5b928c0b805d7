// Fault matrix over the operations that settle a Work and follow its review — settle, processAcceptance, and the syncs
// that see an acceptance, a re-opening or late feedback (tests/helpers/fault-matrix.ts): every Dida fault at every
// request position.
import { runFaultMatrix } from '../helpers/fault-matrix';

runFaultMatrix('review');
