import type { Shape } from '../shape/types';
import type { Direction, EndpointShapes, ShapeChange } from './types';

/** Changes from `documented` to `observed`, classified from the consumer's point of view. */
export function diffShapes(_documented: Shape, _observed: Shape, _direction: Direction, _status?: number): ShapeChange[] {
  throw new Error('diffShapes: not implemented yet');
}

/** Changes of a whole endpoint, new status codes included. */
export function diffEndpoint(_documented: EndpointShapes, _observed: EndpointShapes): ShapeChange[] {
  throw new Error('diffEndpoint: not implemented yet');
}
