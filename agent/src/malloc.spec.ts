import { AGENT_MALLOC_MARK, MALLOC_TOP_PAD, appEnv, execWithAgentMalloc, type ProcessLike } from './malloc';

/** A process as the CLI sees it, with an `execve` that records its call instead of replacing anything. */
function processLike(env: NodeJS.ProcessEnv, overrides: Partial<ProcessLike> = {}) {
  const calls: [string, string[], NodeJS.ProcessEnv][] = [];
  const proc: ProcessLike = {
    env,
    execPath: '/usr/local/bin/node',
    execArgv: ['-r', '/app/register.js'],
    argv: ['/usr/local/bin/node', '/app/spectator-agent.cjs', '--listen', ':4000', '--', 'npm', 'start'],
    platform: 'linux',
    execve: ((file: string, args: string[], next: NodeJS.ProcessEnv) => {
      calls.push([file, args, next]);
    }) as ProcessLike['execve'],
    ...overrides,
  };
  return { proc, calls };
}

describe('execWithAgentMalloc', () => {
  it('restarts the process in place with the top pad, its Node options and arguments unchanged', () => {
    const { proc, calls } = processLike({ PATH: '/bin', SPECTATOR_UPSTREAM: 'http://app:3000' });
    execWithAgentMalloc(proc);
    expect(calls).toEqual([
      [
        '/usr/local/bin/node',
        [
          '/usr/local/bin/node',
          '-r',
          '/app/register.js',
          '/app/spectator-agent.cjs',
          '--listen',
          ':4000',
          '--',
          'npm',
          'start',
        ],
        {
          PATH: '/bin',
          SPECTATOR_UPSTREAM: 'http://app:3000',
          MALLOC_TOP_PAD_: String(16 * 1024 * 1024),
          [AGENT_MALLOC_MARK]: '1',
        },
      ],
    ]);
    expect(MALLOC_TOP_PAD).toBe(16 * 1024 * 1024);
  });

  it('does nothing once the pad is set (after its own restart, or by the user), off Linux, or without execve', () => {
    for (const { proc, calls } of [
      processLike({ MALLOC_TOP_PAD_: '16777216', [AGENT_MALLOC_MARK]: '1' }),
      processLike({ MALLOC_TOP_PAD_: '0' }),
      processLike({}, { platform: 'darwin' }),
      processLike({}, { execve: undefined }),
    ]) {
      execWithAgentMalloc(proc);
      expect(calls).toEqual([]);
    }
  });
});

describe('appEnv', () => {
  it('drops what the agent set for itself, keeps a pad the user set', () => {
    expect(appEnv({ PATH: '/bin', MALLOC_TOP_PAD_: '16777216', [AGENT_MALLOC_MARK]: '1' })).toEqual({ PATH: '/bin' });
    expect(appEnv({ PATH: '/bin', MALLOC_TOP_PAD_: '0' })).toEqual({ PATH: '/bin', MALLOC_TOP_PAD_: '0' });
  });
});
