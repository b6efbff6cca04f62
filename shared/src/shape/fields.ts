import { fieldPath } from '../diff/compare';
import type { Shape } from './types';

export { fieldPath };

/**
 * Every field of a shape as a JSON path, as diffs name them (`$.author`, `$.items[].id`,
 * `$["first name"]`), parents before their children, each once. The body itself (`$`) is not a field.
 */
export function fieldPaths(shape: Shape): string[] {
  const paths = new Set<string>();
  const walk = (node: Shape, at: string): void => {
    switch (node.kind) {
      case 'object':
        for (const field of node.fields) {
          const path = fieldPath(at, field.name);
          paths.add(path);
          walk(field.shape, path);
        }
        return;
      case 'array':
        return walk(node.items, `${at}[]`);
      case 'oneOf':
        for (const option of node.options) walk(option, at);
        return;
      default:
        return;
    }
  };
  walk(shape, '$');
  return [...paths];
}
