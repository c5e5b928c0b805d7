// What a step change asks for (the shape the todo tool and the engine share).
import type { StepStatus } from './work-state';

export type StepChange =
  | { op: 'add'; title: string; status?: 'pending' | 'in_progress' }
  | { op: 'update'; step: string; status?: Exclude<StepStatus, 'deleted'>; resolution?: string; title?: string }
  | { op: 'delete'; step: string }
  | { op: 'clear' };
