import { matchTemplate, siblingTemplate, withParameterAt } from '../src';

describe('withParameterAt', () => {
  it.each([
    ['/images/alice-cli', 1, '/images/{image}'],
    ['/orgs/bob-infra/actions/cache/usage', 1, '/orgs/{org}/actions/cache/usage'],
    ['/repos/{owner}/dave-web/issues', 2, '/repos/{owner}/{id}/issues'],
    ['/browse/categories/dinner', 2, '/browse/categories/{category}'],
    ['/alice', 0, '/{id}'],
    ['/images/{image}', 1, undefined],
    ['/images/x', 2, undefined],
  ])('%s at %d → %s', (path, index, template) => {
    expect(withParameterAt(path, index)).toBe(template);
  });

  it('names a second parameter after the same noun distinctly', () => {
    expect(withParameterAt('/users/{user}/users/bob', 3)).toBe('/users/{user}/users/{user2}');
  });
});

describe('siblingTemplate', () => {
  it.each([
    [['/images/alice-cli', '/images/bob-web'], '/images/{image}'],
    [['/orgs/a-co/repos/x1', '/orgs/b-co/repos/x2'], '/orgs/{org}/repos/{repo}'],
    [['/repos/{owner}/dave-web/issues', '/repos/{owner}/erin-api/issues'], '/repos/{owner}/{id}/issues'],
    [['/users/{user}', '/users/bob'], '/users/{user}'],
    [['/images/a', '/images/a'], undefined],
    [['/images/a'], undefined],
    [['/images/a', '/images/a/b'], undefined],
  ])('%j → %s', (paths, template) => {
    const made = siblingTemplate(paths);
    expect(made).toBe(template);
    if (made !== undefined) for (const path of paths) expect(matchTemplate(made, path)).toBe(true);
  });
});
