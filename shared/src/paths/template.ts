/** Raw path → template (`/posts/17` → `/posts/{postId}`); documented templates in `known` match first. */
export function templatePath(_rawPath: string, _known: readonly string[] = []): string {
  throw new Error('templatePath: not implemented yet');
}

/** Does a raw path (or a template) match a template? */
export function matchTemplate(_template: string, _path: string): boolean {
  throw new Error('matchTemplate: not implemented yet');
}

/** Parameter names of a query string (`?a=1&b=2` → `['a','b']`), sorted and unique; never values. */
export function queryNames(_search: string): string[] {
  throw new Error('queryNames: not implemented yet');
}
